"""Audit.design rows all carry inclusion_probability and weight, computed in one place
(audit.sampling.allocation.design_table): calibration samples drawn before their rows kept them get them here
(the audit page used to fill them on every read). The hint key, which nothing reads, is dropped."""

from django.db import migrations

from audit.sampling.allocation import design_table


def completed(row):
    """The row with the probability and weight of its counts (a value it already has wins), without hint."""
    kept = {k: v for k, v in row.items() if k != "hint"}
    return {**design_table([(row["stratum"], row["population"])], [row["sample"]])[0], **kept}


def complete_rows(apps, schema_editor):
    Audit = apps.get_model("audit", "Audit")
    for audit in Audit.objects.only("design").order_by("pk").iterator():
        rows = [completed(r) for r in audit.design]
        if rows != audit.design:
            Audit.objects.filter(pk=audit.pk).update(design=rows)


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [migrations.RunPython(complete_rows, migrations.RunPython.noop)]
