from django.db import migrations

from charters.db_guards import install


class Migration(migrations.Migration):
    dependencies = [("charters", "0001_initial")]

    operations = [migrations.RunPython(install, reverse_code=migrations.RunPython.noop)]
