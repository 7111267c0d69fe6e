"""uw-csv-bundle: the envelope as a ZIP of CSV members, and its decoder behind the ZIP limits.

A bundle is refused before any member is inflated if it has too many members, a member path that is not
a plain relative name, or a declared size or compression ratio over the limits; then members are
inflated with a hard cap, because declared sizes can lie.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Iterator, Sequence
from typing import Any, Final

from conformance_reference.uwmd_codecs.model import (
    JSON,
    MAX_DEPTH,
    REPRESENTATION_VERSION,
    CodecError,
    number_value,
    utf8,
)

__all__ = ["BUNDLE_MANIFEST", "bundle_to_envelope", "check_member_name", "decode_bundle", "encode_bundle"]

# ZIP extraction limits: a bundle is refused before any member is inflated if it breaks one of these.
ZIP_MAX_MEMBERS: Final = 64
ZIP_MAX_TOTAL: Final = 8 * 1024 * 1024
ZIP_MAX_RATIO: Final = 100
#: Members smaller than this may compress better than the ratio limit (a short CSV of repeated zeros).
ZIP_RATIO_FLOOR: Final = 64 * 1024
_MEMBER_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")


def decode_bundle(body: bytes) -> Any:
    """uw-csv-bundle bytes -> envelope, refusing before inflation: too many members, a member path that
    is not a plain relative name (`../`, absolute, backslash, drive), a declared size or a compression
    ratio over the limits; then inflating with a hard cap, because declared sizes can lie."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
    except (zipfile.BadZipFile, ValueError, OSError):
        raise CodecError(
            422, "BINDING_ZIP_INVALID", "The uw-csv-bundle is not a readable ZIP archive."
        ) from None
    with archive:
        members = archive.infolist()
        if len(members) > ZIP_MAX_MEMBERS:
            raise CodecError(422, "BINDING_ZIP_LIMIT", "The uw-csv-bundle has too many members.")
        names: set[str] = set()
        total = 0
        for info in members:
            check_member_name(info.filename)
            if info.filename in names:
                raise CodecError(422, "BINDING_ZIP_MEMBER_PATH", "The uw-csv-bundle repeats a member name.")
            names.add(info.filename)
            total += info.file_size
            if total > ZIP_MAX_TOTAL:
                raise CodecError(
                    422, "BINDING_ZIP_LIMIT", "The uw-csv-bundle inflates beyond the size limit."
                )
            ratio_base = max(info.compress_size, 1)
            if info.file_size > ZIP_RATIO_FLOOR and info.file_size / ratio_base > ZIP_MAX_RATIO:
                raise CodecError(
                    422,
                    "BINDING_ZIP_RATIO",
                    f"A uw-csv-bundle member compresses more than {ZIP_MAX_RATIO}:1.",
                )
        files: dict[str, str] = {}
        budget = ZIP_MAX_TOTAL
        for info in members:
            data = _inflate(archive, info, min(info.file_size, budget))
            budget -= len(data)
            files[info.filename] = utf8(data, "uw-csv-bundle member")
    return bundle_to_envelope(files)


def check_member_name(name: str) -> None:
    """A bundle member is a plain file name: no directories, no `..`, no absolute or drive paths."""
    if not _MEMBER_NAME.match(name) or ".." in name:
        raise CodecError(
            422, "BINDING_ZIP_MEMBER_PATH", "A uw-csv-bundle member path is not a plain file name."
        )


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    try:
        with archive.open(info) as stream:
            data = stream.read(cap + 1)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError):
        raise CodecError(422, "BINDING_ZIP_INVALID", "A uw-csv-bundle member cannot be inflated.") from None
    if len(data) > cap:
        raise CodecError(
            422, "BINDING_ZIP_LIMIT", "A uw-csv-bundle member inflates beyond its declared size."
        )
    return data


#: Bundle members, one per envelope member: every node as a row (JSON pointer, kind, value).
BUNDLE_MANIFEST: Final = "manifest.csv"


def encode_bundle(envelope: JSON) -> bytes:
    """A lossless CSV bundle: `manifest.csv` plus one CSV per envelope member, each node one row."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        manifest = [
            ("representation", "uw-csv-bundle"),
            ("representation_version", REPRESENTATION_VERSION),
            ("envelope_version", str(envelope.get("envelope_version", ""))),
            ("semantic_digest", str(envelope.get("semantic_digest", ""))),
        ]
        _write_member(archive, BUNDLE_MANIFEST, [("key", "value"), *manifest])
        for key, value in envelope.items():
            rows = [("pointer", "kind", "value"), *_rows("/" + _pointer_token(key), value)]
            _write_member(archive, f"{_member_stem(key)}.csv", rows)
    return buffer.getvalue()


def _member_stem(key: str) -> str:
    return key if re.fullmatch(r"[a-z][a-z0-9_]{0,60}", key) else "m_" + key.encode("utf-8").hex()[:60]


def _write_member(archive: zipfile.ZipFile, name: str, rows: Sequence[Sequence[str]]) -> None:
    text = io.StringIO()
    csv.writer(text, lineterminator="\r\n").writerows(rows)
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, text.getvalue().encode("utf-8"))


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _rows(pointer: str, value: Any) -> Iterator[tuple[str, str, str]]:
    if isinstance(value, dict):
        yield pointer, "object", ""
        for key, item in value.items():
            yield from _rows(f"{pointer}/{_pointer_token(key)}", item)
    elif isinstance(value, list):
        yield pointer, "array", ""
        for index, item in enumerate(value):
            yield from _rows(f"{pointer}/{index}", item)
    elif isinstance(value, str):
        yield pointer, "string", value
    elif value is None:
        yield pointer, "null", ""
    elif isinstance(value, bool):
        yield pointer, "boolean", "true" if value else "false"
    else:
        yield pointer, "number", repr(value) if isinstance(value, float) else str(value)


def bundle_to_envelope(files: dict[str, str]) -> JSON:
    """Rebuild the envelope from the rows of every member but the manifest (containers before children)."""
    root: JSON = {}
    for name in sorted(files):
        if name == BUNDLE_MANIFEST:
            continue
        reader = csv.reader(io.StringIO(files[name], newline=""))
        header = next(reader, None)
        if header != ["pointer", "kind", "value"]:
            raise CodecError(
                422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle member has an unexpected header."
            )
        for row in reader:
            if len(row) != 3:
                raise CodecError(
                    422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle row does not have three cells."
                )
            _place(root, row[0], _cell(row[1], row[2]))
    return root


def _cell(kind: str, text: str) -> Any:
    if kind == "object":
        return {}
    if kind == "array":
        return []
    if kind == "string":
        return text
    if kind == "null":
        return None
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    if kind == "number":
        return number_value(text)
    raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle row has an unknown kind.")


def _place(root: JSON, pointer: str, value: Any) -> None:
    if not pointer.startswith("/"):
        raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle pointer is not absolute.")
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]
    if len(tokens) > MAX_DEPTH:
        raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle pointer nests too deeply.")
    parent: Any = root
    for token in tokens[:-1]:
        parent = parent.get(token) if isinstance(parent, dict) else _index(parent, token)
        if not isinstance(parent, dict | list):
            raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle row has no parent container.")
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list) and last == str(len(parent)):
        parent.append(value)
    else:
        raise CodecError(422, "BINDING_BUNDLE_INVALID", "A uw-csv-bundle array row is out of order.")


def _index(items: Any, token: str) -> Any:
    if isinstance(items, list) and token.isdigit() and int(token) < len(items):
        return items[int(token)]
    return None
