"""The writer's check of an object-store root: does the store honour conditional writes?

LanceDB commits version N of a table by writing ``_versions/N.manifest`` with a conditional PUT
(``If-None-Match: *``): of two committers racing for the same N, the store refuses the second
(412), which then retries on top of the first. A store that ignores the condition lets the second
overwrite the first, and the first commit's rows are lost without any error. Before the first
write to an ``s3://`` root the indexer PUTs one probe object twice with ``If-None-Match: *`` and
refuses the store unless the second PUT fails with 412. The fix it names is LanceDB's DynamoDB
commit table (``s3+ddb://bucket/prefix?ddbTableName=…``), which is not probed. Google Cloud
Storage and Azure Blob have always enforced preconditions; they are not probed either.

boto3 (the optional extra ``local-memory-indexer[s3]``) sends the probe.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any
from urllib.parse import urlsplit

from local_memory_shared.errors import StoreError
from local_memory_shared.lance_location import LanceLocation

FIX = "LOCAL_MEMORY_LANCE_URI=s3+ddb://BUCKET/PREFIX?ddbTableName=TABLE (LanceDB's DynamoDB commit table)"

_CHECKED: set[tuple[str, str]] = set()
_LOCK = threading.Lock()


def check_conditional_writes(location: LanceLocation) -> None:
    """Refuse an ``s3://`` store that ignores ``If-None-Match`` (checked once per bucket and process)."""
    if location.uri is None or urlsplit(location.uri).scheme != "s3":
        return
    options = location.storage_options
    bucket = urlsplit(location.uri).netloc
    key = (options.get("aws_endpoint", ""), bucket)
    with _LOCK:
        if key in _CHECKED:
            return
    honoured = _probe(bucket, options)
    if not honoured:
        raise StoreError(
            f"the object store of s3://{bucket} ignores conditional writes (If-None-Match): two "
            f"committers racing on one table would overwrite each other's version. Use {FIX}.",
            details={"bucket": bucket, "endpoint": key[0] or None, "fix": FIX},
        )
    with _LOCK:
        _CHECKED.add(key)


def _probe(bucket: str, options: dict[str, str]) -> bool:
    """True when a second ``If-None-Match: *`` PUT of one key is refused with 412."""
    client = _client(options)
    probe_key = f"_local_memory_commit_probe/{uuid.uuid4().hex}"
    try:
        client.put_object(Bucket=bucket, Key=probe_key, Body=b"1", IfNoneMatch="*")
        try:
            client.put_object(Bucket=bucket, Key=probe_key, Body=b"2", IfNoneMatch="*")
        except Exception as exc:  # botocore ClientError; anything but 412 is a real failure
            status = getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 412:
                return True
            raise
        return False
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"cannot write to s3://{bucket}: {exc}", details={"bucket": bucket}) from exc
    finally:
        try:
            client.delete_object(Bucket=bucket, Key=probe_key)
        except Exception:  # noqa: S110 - the probe object is tiny; a failed delete is harmless
            pass


def _client(options: dict[str, str]) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError as exc:
        raise StoreError(
            "an s3:// LOCAL_MEMORY_LANCE_URI needs boto3 for the conditional-write check: "
            "pip install 'local-memory-indexer[s3]'",
            details={"fix": "pip install 'local-memory-indexer[s3]'"},
        ) from exc
    return boto3.client(
        "s3",
        endpoint_url=options.get("aws_endpoint"),
        aws_access_key_id=options.get("aws_access_key_id"),
        aws_secret_access_key=options.get("aws_secret_access_key"),
        aws_session_token=options.get("aws_session_token"),
        region_name=options.get("aws_region") or "us-east-1",
        config=Config(
            retries={"max_attempts": 2},
            s3={"addressing_style": "path" if options.get("aws_endpoint") else "auto"},
        ),
    )
