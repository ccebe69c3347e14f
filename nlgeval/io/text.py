"""Reading a file's text: decompressed (gzip, bz2, xz by magic bytes), decoded as UTF-8 (or
UTF-16 with a byte-order mark), with the row and byte of the first bad byte in the error. The
leaf of :mod:`nlgeval.io`: the table readers build on it."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
from pathlib import Path

from nlgeval.errors import InputError

#: The column every frame read by :mod:`nlgeval.io` carries: the 1-based row in the file.
ROW = "_row"

_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .xls


def read_bytes_decompressed(path: str | Path) -> bytes:
    """A file's bytes, decompressed when it is gzip, bz2 or xz (recognised by magic bytes, not
    by name); a zip archive or an Excel workbook raises :class:`InputError` saying what to do.

    Examples:
        A gzip file is recognised by its magic bytes, whatever its name:

        >>> import gzip, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     f = Path(tmp) / "scores.csv"
        ...     _ = f.write_bytes(gzip.compress(b"a,b\\n"))
        ...     print(read_bytes_decompressed(f))
        b'a,b\\n'
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except IsADirectoryError:
        raise InputError("expected a file, found a directory", file=path) from None
    bz2_magic = data[:3] == b"BZh" and data[3:4].isdigit() and data[4:10] == b"1AY&SY"
    for found, name, opener in ((data.startswith(b"\x1f\x8b"), "gzip", gzip.decompress),
                                (bz2_magic, "bz2", bz2.decompress),
                                (data.startswith(b"\xfd7zXZ\x00"), "xz", lzma.decompress)):
        if found:
            try:
                return opener(data)
            except (OSError, EOFError, ValueError, lzma.LZMAError) as exc:
                raise InputError(f"the file is {name}-compressed but cannot be decompressed "
                                 f"({exc}); is it truncated?", file=path) from None
    if data.startswith(_ZIP_MAGIC):
        if path.suffix.lower() in (".xlsx", ".xlsm", ".ods") or b"xl/workbook" in data[:4096]:
            raise InputError("this is a spreadsheet workbook, not a text table; save the sheet "
                             "as CSV (UTF-8) and pass that file", file=path)
        raise InputError("this is a zip archive; extract the table from it and pass that "
                         "file (gzip-compressed files are read directly)", file=path)
    if data.startswith(_OLE_MAGIC):
        raise InputError("this is a binary Excel (.xls) workbook, not a text table; save the "
                         "sheet as CSV (UTF-8) and pass that file", file=path)
    return data


def read_text_utf8(path: str | Path) -> str:
    """Read a whole file as UTF-8, naming the row and byte offset of the first bad byte.

    Compressed files (gzip, bz2, xz) are decompressed first; a UTF-16 byte-order mark
    (Excel's "Unicode text") makes it decode as UTF-16.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     f = Path(tmp) / "bad.csv"
        ...     _ = f.write_bytes(b"system\\nA\\xff\\n")
        ...     try:
        ...         read_text_utf8(f)
        ...     except InputError as err:
        ...         print(err.row, "not valid UTF-8" in str(err))
        2 True
    """
    path = Path(path)
    data = read_bytes_decompressed(path)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise InputError("the file starts with a UTF-16 byte-order mark but is not valid "
                             "UTF-16 (save it as UTF-8)", file=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"byte 0x{data[exc.start]:02x} at byte {col} of the line is not valid UTF-8 "
            "(save the file as UTF-8)",
            file=path,
            row=line,
        ) from None
    return text.removeprefix("\ufeff")


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """Why ``text`` is not valid Unicode, or ``None``: a lone surrogate code point (half of a
    UTF-16 pair, such as the JSON escape ``\\ud800``, which Python's json accepts) cannot be
    written as UTF-8, so a text holding one could be neither scored, cached nor written out.

    Examples:
        >>> lone_surrogate("caf\\u00e9 \\U0001F600") is None
        True
        >>> lone_surrogate("bad \\ud800 text")
        'not valid Unicode: a lone surrogate U+D800 at character 5'
    """
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (f"not valid Unicode: a lone surrogate U+{ord(found.group()):04X} at character "
            f"{found.start() + 1}")


def lone_surrogate_in(value: object, where: str = "") -> tuple[str, str] | None:
    """The first lone surrogate (see :func:`lone_surrogate`) in parsed JSON -- a string, or
    the keys and values of nested objects and arrays -- as ``(key path, why)``, or ``None``.
    The path is dotted, arrays 1-based (``criteria[1].name``); a bad key is named by its
    parent's path.

    Examples:
        >>> lone_surrogate_in({"name": "ok", "criteria": [{"name": "flu\\udc00ency"}]})
        ('criteria[1].name', 'not valid Unicode: a lone surrogate U+DC00 at character 4')
        >>> lone_surrogate_in({"a": ["x", 1, None, {"b": "\\U0001F600"}]}) is None
        True
    """
    if isinstance(value, str):
        why = lone_surrogate(value)
        return None if why is None else (where, why)
    if isinstance(value, dict):
        for key, item in value.items():
            why = lone_surrogate(str(key))
            if why is not None:
                return where, f"a key is {why}"
            found = lone_surrogate_in(item, f"{where}.{key}" if where else str(key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value, start=1):
            found = lone_surrogate_in(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None
