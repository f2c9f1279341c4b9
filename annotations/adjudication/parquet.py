"""The Parquet writer of the gold export, apart so that pyarrow is imported only by a Parquet export."""

import io

import pyarrow as pa
import pyarrow.parquet as pq


def to_parquet(rows, columns):
    """columns: [(name, pyarrow type name, e.g. "string", "int64")]."""
    types = [getattr(pa, typ)() for _, typ in columns]
    schema = pa.schema([pa.field(name, t) for (name, _), t in zip(columns, types, strict=True)])
    table = pa.Table.from_arrays(
        [pa.array([row[i] for row in rows], type=t) for i, t in enumerate(types)], schema=schema
    )
    buf = io.BytesIO()
    # Built from arrays, not pandas: no pandas metadata. pyarrow writes no timestamp; the bytes repeat
    # (tested). The footer's created_by names the pyarrow version, constant for one install.
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()
