from audit.models import Dataset, ImportBatch


def recent_imports(limit=20):
    return ImportBatch.objects.select_related("dataset", "user")[:limit]


def dataset_names():
    return list(Dataset.objects.values_list("name", flat=True))
