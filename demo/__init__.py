"""The demo app: what shows the product working, never used by the product's own stages.

It holds the bundled examples' loaders (``demo.loaders``, ``demo.grading``, ``demo.decisions``,
``demo.scorecards``: the credit-memo example set up, graded, gated and signed off through the
same services as the web app), the demo commands (``manage.py demo``, ``manage.py
demo_logins``), and the test doubles shared by the tests, benchmarks and demos
(``demo.testing``: the loopback fake OpenAI-compatible model and the builders of grading worlds,
decisions and scorecards). It sits above every stage: it may import any of them, none imports it.
"""
