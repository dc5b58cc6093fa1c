#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

from enterpriseval.cli import main

if __name__ == "__main__":
    main()
