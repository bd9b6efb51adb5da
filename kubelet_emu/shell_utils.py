"""The programs of the container shell that take no time: coreutils-like text tools over
the emulated filesystem (echo, printf, cat, grep, head, tail, wc, sort, uniq, seq, tr, cut,
tee, env, ls, mkdir, touch, rm, date, hostname, yes, basename, dirname, true, false), with
sed and awk in `shell_text`. Each reads its `IO` and returns its exit status."""

from __future__ import annotations

import datetime
import posixpath
import re
from collections.abc import Callable

import kubelet_emu.shell_text as shell_text
from kubelet_emu.shell_base import (
    IO,
    BrokenPipe,
    FileSystem,
    UtilShell,
    lines_of,
    read_inputs,
    split_options,
    unsupported,
    write_lines,
)

Utility = Callable[[UtilShell, list[str], IO], int]


def duration(args: list[str]) -> float | None:
    """`sleep`'s operands in seconds (None when missing or invalid)."""
    total = 0.0
    if not args:
        return None
    for a in args:
        if a == "infinity":
            return float("inf")
        m = re.fullmatch(r"([0-9]*\.?[0-9]+)([smhd]?)", a)
        if m is None:
            return None
        total += float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    return total


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "a": "\a", "r": "\r", "b": "\b", "f": "\f",
            "v": "\v", "e": "\x1b", '"': '"'}


def escapes(text: str) -> tuple[str, bool]:
    """Backslash escapes resolved (echo -e, printf %b); True when `\\c` stops the output."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "c":
            return "".join(out), True
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "0" or nxt in "1234567":
            m = re.match(r"0?[0-7]{0,3}", text[i + 1:])
            digits = m.group(0) if m else ""
            out.append(chr(int(digits.lstrip("0") or "0", 8)))
            i += 1 + len(digits)
        elif nxt == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", text[i + 2:])
            out.append(chr(int(m.group(0), 16)) if m else "\\x")
            i += 2 + (len(m.group(0)) if m else 0)
        else:
            out.append(c + nxt)
            i += 2
    return "".join(out), False


def _echo(sh: UtilShell, args: list[str], io: IO) -> int:
    newline, interpret = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        interpret = (interpret or "e" in args[0]) and "E" not in args[0]
        args = args[1:]
    text = " ".join(args)
    stop = False
    if interpret:
        text, stop = escapes(text)
    io.out.write(text + ("\n" if newline and not stop else ""))
    return 0


_CONVERSION = re.compile(r"%([-+ #0]*)([0-9]*)(?:\.([0-9]*))?([diouxXeEfgGcsbq%])")


def _printf(sh: UtilShell, args: list[str], io: IO) -> int:
    if args and args[0] == "-v":
        raise unsupported("printf -v")
    if not args:
        io.error("printf: usage: printf [-v var] format [arguments]")
        return 2
    fmt, values = args[0], args[1:]
    status = 0
    out: list[str] = []
    while True:
        text, used, failed = _format_once(fmt, values, io)
        out.append(text)
        status = status or failed
        values = values[used:]
        if not values or not used:
            break
    io.out.write("".join(out))
    return status


def _format_once(fmt: str, values: list[str], io: IO) -> tuple[str, int, int]:
    """One pass of printf's format: the text, how many values it used, 1 if one failed."""
    used = 0
    status = 0

    def convert(m: re.Match[str]) -> str:
        nonlocal used, status
        flags, width, precision, kind = m.groups()
        if kind == "%":
            return "%"
        value = values[used] if used < len(values) else ""
        used += 1
        spec = "%" + flags + width + ("." + precision if precision is not None else "")
        if kind in "diouxX":
            number = _number(value, io)
            status = status or (number is None)
            return (spec + kind.replace("i", "d").replace("u", "d")) % (number or 0)
        if kind in "eEfgG":
            try:
                return (spec + kind) % float(value or 0)
            except ValueError:
                io.error(f"printf: {value}: invalid number")
                status = 1
                return (spec + kind) % 0.0
        if kind == "c":
            return (spec + "s") % value[:1]
        if kind == "b":
            return (spec + "s") % escapes(value)[0]
        if kind == "q":
            return "'" + value.replace("'", "'\\''") + "'" if re.search(
                r"[^\w@%+=:,./-]", value) else value
        return (spec + "s") % value

    out = []
    for k, piece in enumerate(_PIECES.split(fmt)):
        if k % 2:
            m = _CONVERSION.fullmatch(piece)
            out.append(convert(m) if m else piece)
        else:
            out.append(escapes(piece)[0])
    return "".join(out), used, status


_PIECES = re.compile(r"(%[-+ #0]*[0-9]*(?:\.[0-9]*)?[diouxXeEfgGcsbq%])")


def _number(value: str, io: IO) -> int | None:
    text = value.strip()
    if not text:
        return 0
    if text[0] in "'\"" and len(text) > 1:
        return ord(text[1])
    try:
        return int(text, 0) if re.fullmatch(r"[-+]?0[xX][0-9a-fA-F]+", text) else int(text)
    except ValueError:
        io.error(f"printf: {value}: invalid number")
        return None


def _cat(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, files = split_options(args)
    text, status = read_inputs(sh, "cat", files, io)
    if "n" in opts:
        text = "".join(f"{k:6}\t{line}\n" for k, line in enumerate(lines_of(text), 1))
    io.out.write(text)
    return status


def _grep(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, rest = split_options(args, "em")
    patterns = [opts["e"]] if "e" in opts else rest[:1]
    files = rest if "e" in opts else rest[1:]
    if not patterns:
        io.error("Usage: grep [OPTION]... PATTERNS [FILE]...")
        return 2
    flags = re.I if "i" in opts else 0
    regexes = []
    for pat in patterns[0].split("\n"):
        body = re.escape(pat) if "F" in opts else pat if "E" in opts else shell_text.bre(pat)
        if "w" in opts:
            body = rf"\b(?:{body})\b"
        if "x" in opts:
            body = rf"^(?:{body})$"
        regexes.append(body)
    try:
        rx = re.compile("|".join(f"(?:{r})" for r in regexes), flags)
    except re.error:
        io.error("grep: Invalid regular expression")
        return 2
    text, status = read_inputs(sh, "grep", files, io)
    matched = []
    for number, line in enumerate(lines_of(text), 1):
        hit = rx.search(line)
        if bool(hit) == ("v" not in opts):
            prefix = f"{number}:" if "n" in opts else ""
            if "o" in opts and hit:
                matched += [prefix + m.group(0) for m in rx.finditer(line) if m.group(0)]
            else:
                matched.append(prefix + line)
    if "m" in opts:
        matched = matched[:int(opts["m"] or 0)]
    if "c" in opts:
        io.print(str(len(matched)))
    elif "q" not in opts:
        write_lines(io, matched)
    return 2 if status else (0 if matched else 1)


def _count(opts: dict[str, str], rest: list[str]) -> tuple[str, list[str]]:
    """head's and tail's -n N (also -N); the count's text keeps a leading + or -."""
    if "n" in opts:
        return opts["n"], rest
    if rest and re.fullmatch(r"-[0-9]+", rest[0]):
        return rest[0][1:], rest[1:]
    return "10", rest


def _head(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, rest = split_options(args, "nc")
    count, files = _count(opts, rest)
    text, status = read_inputs(sh, "head", files, io)
    if "c" in opts:
        io.out.write(text[:int(opts["c"])])
        return status
    lines = lines_of(text)
    n = int(count)
    write_lines(io, lines[:n] if n >= 0 else lines[:n])
    return status


def _tail(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, rest = split_options(args, "nc")
    if "f" in opts or "F" in opts:
        raise unsupported("tail -f")
    count, files = _count(opts, rest)
    text, status = read_inputs(sh, "tail", files, io)
    if "c" in opts:
        io.out.write(text[-int(opts["c"]):] if int(opts["c"]) else "")
        return status
    lines = lines_of(text)
    if count.startswith("+"):
        write_lines(io, lines[max(int(count) - 1, 0):])
    else:
        n = abs(int(count))
        write_lines(io, lines[-n:] if n else [])
    return status


def _wc(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, files = split_options(args)
    text, status = read_inputs(sh, "wc", files, io)
    counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode()),
              "m": len(text)}
    chosen = [k for k in "lwmc" if k in opts] or ["l", "w", "c"]
    values = [str(counts[k]) for k in chosen]
    name = f" {files[0]}" if len(files) == 1 else ""
    if len(values) == 1:
        io.print(values[0] + name)
    else:
        io.print(" ".join(v.rjust(7 if not files else 1) for v in values) + name)
    return status


def _sort_key(opts: dict[str, str]) -> Callable[[str], object]:
    sep = opts.get("t") or None
    field = int(opts["k"].split(",")[0].split(".")[0]) if opts.get("k") else 0

    def key(line: str) -> object:
        text = line
        if field:
            parts = line.split(sep) if sep else line.split()
            text = " ".join(parts[field - 1:]) if field <= len(parts) else ""
        if "f" in opts:
            text = text.lower()
        if "n" in opts:
            m = re.match(r"\s*(-?[0-9]+(?:\.[0-9]+)?)", text)
            return (float(m.group(1)) if m else 0.0, text)
        return text
    return key


def _sort(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, files = split_options(args, "tko")
    text, status = read_inputs(sh, "sort", files, io)
    lines = sorted(lines_of(text), key=_sort_key(opts), reverse="r" in opts)  # type: ignore[arg-type]
    if "u" in opts:
        lines = list(dict.fromkeys(lines))
    write_lines(io, lines)
    return status


def _uniq(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, files = split_options(args)
    text, status = read_inputs(sh, "uniq", files, io)
    groups: list[list[str]] = []
    for line in lines_of(text):
        if groups and groups[-1][0] == line:
            groups[-1].append(line)
        else:
            groups.append([line])
    if "d" in opts:
        groups = [g for g in groups if len(g) > 1]
    if "u" in opts:
        groups = [g for g in groups if len(g) == 1]
    write_lines(io, [f"{len(g):7} {g[0]}" if "c" in opts else g[0] for g in groups])
    return status


def _seq(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, rest = split_options(args, "s")
    try:
        numbers = [float(a) if "." in a else int(a) for a in rest]
    except ValueError:
        io.error(f"seq: invalid floating point argument: '{rest[0] if rest else ''}'")
        return 1
    if not 1 <= len(numbers) <= 3:
        io.error("seq: missing operand")
        return 1
    first, step, last = (1, 1, numbers[0]) if len(numbers) == 1 else \
        (numbers[0], 1, numbers[1]) if len(numbers) == 2 else tuple(numbers)
    out = []
    value = first
    while (step > 0 and value <= last) or (step < 0 and value >= last):
        out.append(str(value))
        value += step
        if not step:
            break
    if out:
        io.out.write(opts.get("s", "\n").join(out) + "\n")
    return 0


def _tr_set(spec: str) -> str:
    classes = {"[:upper:]": "A-Z", "[:lower:]": "a-z", "[:digit:]": "0-9",
               "[:space:]": " \t\n\r\f\v", "[:alpha:]": "A-Za-z", "[:alnum:]": "A-Za-z0-9",
               "[:punct:]": "!-/:-@[-`{-~"}
    for name, body in classes.items():
        spec = spec.replace(name, body)
    spec = escapes(spec)[0]
    out = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            out += [chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1)]
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return "".join(out)


def _tr(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, sets = split_options(args)
    if not sets:
        io.error("tr: missing operand")
        return 1
    source = _tr_set(sets[0])
    text = io.stdin
    if "c" in opts:
        raise unsupported("tr -c")
    if "d" in opts:
        text = "".join(c for c in text if c not in source)
    elif len(sets) > 1:
        target = _tr_set(sets[1])
        target = target + target[-1:] * (len(source) - len(target))
        text = text.translate(str.maketrans(source, target[:len(source)]))
    if "s" in opts:
        squeeze = _tr_set(sets[-1])
        text = re.sub("([" + re.escape(squeeze) + "])\\1+", r"\1", text)
    io.out.write(text)
    return 0


def _ranges(spec: str) -> Callable[[int], bool]:
    spans = []
    for part in spec.split(","):
        lo, dash, hi = part.partition("-")
        spans.append((int(lo) if lo else 1, int(hi) if hi else (10 ** 9 if dash else int(lo))))
    return lambda k: any(lo <= k <= hi for lo, hi in spans)


def _cut(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, files = split_options(args, "dfcb")
    text, status = read_inputs(sh, "cut", files, io)
    out = []
    for line in lines_of(text):
        if "f" in opts:
            sep = opts.get("d", "\t") or "\t"
            fields = line.split(sep)
            wanted = _ranges(opts["f"])
            if len(fields) == 1 and "s" not in opts:
                out.append(line)
            elif len(fields) > 1:
                out.append(sep.join(f for k, f in enumerate(fields, 1) if wanted(k)))
        elif "c" in opts or "b" in opts:
            wanted = _ranges(opts.get("c") or opts.get("b") or "1")
            out.append("".join(c for k, c in enumerate(line, 1) if wanted(k)))
        else:
            io.error("cut: you must specify a list of bytes, characters, or fields")
            return 1
    write_lines(io, out)
    return status


def _tee(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, files = split_options(args)
    for f in files:
        sh.fs.write(sh.path(f), io.stdin, append="a" in opts)
    io.out.write(io.stdin)
    return 0


def _env(sh: UtilShell, args: list[str], io: IO) -> int:
    values = sh.exported()
    if args and not args[0].startswith("-") and "=" not in args[0]:
        raise unsupported("env COMMAND", 127)
    write_lines(io, [f"{k}={v}" for k, v in values.items()])
    return 0


def _printenv(sh: UtilShell, args: list[str], io: IO) -> int:
    values = sh.exported()
    if not args:
        return _env(sh, [], io)
    write_lines(io, [values[a] for a in args if a in values])
    return 0 if all(a in values for a in args) else 1


def _ls(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, paths = split_options(args)
    if "l" in opts:
        raise unsupported("ls -l")
    status = 0
    out: list[str] = []
    for k, name in enumerate(paths or ["."]):
        path = sh.path(name)
        names = sh.fs.listing(path)
        if names is None:
            io.error(f"ls: cannot access '{name}': No such file or directory")
            status = 2
            continue
        if "R" in opts:
            _ls_tree(sh.fs, name.rstrip("/") or "/", path, out)
            continue
        if not sh.fs.is_dir(path):
            out.append(name)
            continue
        if len(paths) > 1:
            out += ([""] if k else []) + [f"{name}:"]
        out += [n for n in names if "a" in opts or not n.startswith(".")]
    write_lines(io, out)
    return status


def _ls_tree(fs: FileSystem, shown: str, path: str, out: list[str]) -> None:
    entries = fs.listing(path) or []
    if out:
        out.append("")
    out.append(f"{shown}:")
    out += entries
    for e in entries:
        child = posixpath.join(path, e)
        if fs.is_dir(child):
            _ls_tree(fs, posixpath.join(shown, e), child, out)


def _mkdir(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, paths = split_options(args, "m")
    status = 0
    for name in paths:
        path = sh.path(name)
        if "p" in opts:
            parts = path.strip("/").split("/")
            for k in range(1, len(parts) + 1):
                sh.fs.mkdir("/" + "/".join(parts[:k]))
        elif sh.fs.exists(path) or not sh.fs.mkdir(path):
            reason = "File exists" if sh.fs.exists(path) else "No such file or directory"
            io.error(f"mkdir: cannot create directory '{name}': {reason}")
            status = 1
    return status


def _touch(sh: UtilShell, args: list[str], io: IO) -> int:
    status = 0
    for name in split_options(args)[1]:
        path = sh.path(name)
        if not sh.fs.exists(path) and not sh.fs.write(path, ""):
            io.error(f"touch: cannot touch '{name}': No such file or directory")
            status = 1
    return status


def _rm(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, paths = split_options(args)
    status = 0
    for name in paths:
        path = sh.path(name)
        if sh.fs.is_dir(path) and "r" in opts:
            for child in [p for p in (*sh.fs.files, *sh.fs.dirs) if p.startswith(path + "/")]:
                sh.fs.remove(child)
        if not sh.fs.remove(path) and "f" not in opts:
            io.error(f"rm: cannot remove '{name}': No such file or directory")
            status = 1
    return status


def _date(sh: UtilShell, args: list[str], io: IO) -> int:
    opts, rest = split_options(args, "d")
    if "d" in opts:
        raise unsupported("date -d")
    try:
        now = datetime.datetime.fromisoformat(sh.now().replace("Z", "+00:00"))
    except ValueError:
        io.print(sh.now())
        return 0
    fmt = next((a[1:] for a in rest if a.startswith("+")), None)
    if fmt is None:
        io.print(now.strftime("%a %b %e %H:%M:%S UTC %Y"))
        return 0
    fmt = fmt.replace("%s", str(int(now.timestamp()))).replace("%N", f"{now.microsecond:06}000")
    io.print(now.strftime(fmt))
    return 0


def _hostname(sh: UtilShell, args: list[str], io: IO) -> int:
    io.print(sh.get("HOSTNAME") or "")
    return 0


def _yes(sh: UtilShell, args: list[str], io: IO) -> int:
    line = (" ".join(args) or "y") + "\n"
    chunk = line * max(1, 4096 // len(line))
    try:
        while True:
            io.out.write(chunk)
    except BrokenPipe:
        return 141


def _basename(sh: UtilShell, args: list[str], io: IO) -> int:
    if not args:
        io.error("basename: missing operand")
        return 1
    name = posixpath.basename(args[0].rstrip("/")) or "/"
    if len(args) > 1 and name.endswith(args[1]) and name != args[1]:
        name = name[:-len(args[1])]
    io.print(name)
    return 0


def _dirname(sh: UtilShell, args: list[str], io: IO) -> int:
    if not args:
        io.error("dirname: missing operand")
        return 1
    io.print(posixpath.dirname(args[0].rstrip("/")) or ("/" if args[0].startswith("/") else "."))
    return 0


def _status(code: int) -> Utility:
    return lambda sh, args, io: code


UTILITIES: dict[str, Utility] = {
    "echo": _echo, "printf": _printf, "cat": _cat, "grep": _grep, "head": _head,
    "tail": _tail, "wc": _wc, "sort": _sort, "uniq": _uniq, "seq": _seq, "tr": _tr,
    "cut": _cut, "tee": _tee, "env": _env, "printenv": _printenv, "ls": _ls, "mkdir": _mkdir,
    "touch": _touch, "rm": _rm, "date": _date, "hostname": _hostname, "yes": _yes,
    "basename": _basename, "dirname": _dirname, "true": _status(0), ":": _status(0),
    "false": _status(1), "sed": shell_text.sed, "awk": shell_text.awk,
}
