#!/usr/bin/env python3
"""mkpages.py - the man pages from docs/man/*.md, flexrma.h and docs/specification.md.

    mkpages.py SRC_DIR OUT_DIR VERSION

Writes OUT_DIR/man3/*.3 and OUT_DIR/man7/*.7: one page per source file, and a `.so` link page
for every other name the page documents (each name of its synopsis, and PMPI_<name> for each
function). Where the text comes from, so that nothing is kept twice (docs/architecture.md,
"Man pages"):
  - the SYNOPSIS is copied from include/flexrma.h, declaration by declaration, as written there;
  - a line `@spec-table N` inserts the table of section N of docs/specification.md (flexrma(7)'s
    environment variables are the specification's table);
  - everything else is the source file (docs/man/README.md describes its format).
A name in a Synopsis line that flexrma.h does not declare stops the build.
Plain python3, no other package: it runs on a fresh Debian machine.
"""
import os
import re
import sys

# ---- flexrma.h: each public name's declaration, exactly as written ----


def header_declarations(text):
    """{name: declaration text} for every function, typedef, extern and #define of flexrma.h."""
    lines = text.split("\n")
    decls = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"(?:int|void)\s+\*?(\w+)\(", line)
        if m:
            j = i
            while not lines[j].rstrip().endswith(";"):
                j += 1
            decls[m.group(1)] = "\n".join(lines[i:j + 1])
            i = j + 1
            continue
        m = re.match(r"typedef struct (\w+) \{", line)
        if m:
            j = i
            while not lines[j].startswith("}"):
                j += 1
            decls[m.group(1)] = "\n".join(lines[i:j + 1])
            i = j + 1
            continue
        m = re.match(r"extern .*?(\w+);", line)
        if m:
            decls[m.group(1)] = line
        m = re.match(r"#define (\w+)", line)
        if m and m.group(1) != "FLEXRMA_H":
            decls[m.group(1)] = line
        i += 1
    return decls


def is_function(decl):
    return decl.endswith(");")


# ---- docs/specification.md: a section's table ----


def spec_section(spec, number):
    """The text of section `number` ("10", "13.1"), up to the next heading of its level or above."""
    depth = number.count(".") + 2
    start = re.search(r"^#{%d} %s[. ]" % (depth, re.escape(number)), spec, re.M)
    if not start:
        sys.exit("mkpages: docs/specification.md has no section %s" % number)
    rest = spec[start.end():]
    end = re.search(r"^#{2,%d} " % depth, rest, re.M)
    return rest[:end.start()] if end else rest


def table_rows(section):
    """The rows of the first Markdown table in section, as lists of cells (header row dropped)."""
    rows = []
    for line in section.split("\n"):
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if all(re.fullmatch(r"-+", c) for c in cells):
            continue
        rows.append(cells)
    return rows[1:]


# ---- inline Markdown to roff ----


def escape(text):
    text = text.replace("\\", "\\e")
    return text


def code(text):
    """A code span: bold, with minus signs that stay ASCII hyphens when copied."""
    return "\\fB" + escape(text).replace("-", "\\-").replace("'", "\\(aq") + "\\fR"


def inline(text):
    out = []
    for k, part in enumerate(re.split(r"`([^`]*)`", text)):
        if k % 2:
            out.append(code(part))
            continue
        part = escape(part)
        part = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", part)
        part = re.sub(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])", r"\\fI\1\\fR", part)
        out.append(part)
    return "".join(out)


def roff_line(text):
    """A text line that troff will not take for a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


# ---- one source file ----


class Page:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        m = re.fullmatch(r"# (\S+)\((\d)\)", lines[0])
        if not m:
            sys.exit("mkpages: %s: the first line must be '# NAME(SECTION)'" % path)
        self.path, self.name, self.section = path, m.group(1), m.group(2)
        self.meta = {}
        i = 2
        while i < len(lines) and lines[i].strip():
            key, _, value = lines[i].partition(":")
            self.meta[key.strip().lower()] = value.strip()
            i += 1
        self.body = lines[i:]
        self.synopsis = self.meta.get("synopsis", "").split()
        self.spec = self.meta.get("spec", "").split()


def render_body(page, spec):
    """The source's sections (## TITLE) as roff."""
    out = []
    section = ""
    lines = page.body
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
            out.append(".SH " + section)
            i += 1
            continue
        if line.startswith("```"):
            j = i + 1
            out += [".PP", ".RS 4", ".nf"]
            while not lines[j].startswith("```"):
                out.append(roff_line(escape(lines[j]).replace("-", "\\-")))
                j += 1
            out += [".fi", ".RE"]
            i = j + 1
            continue
        m = re.match(r"@spec-table (\S+)$", line)
        if m:
            for cells in table_rows(spec_section(spec, m.group(1))):
                out += [".TP", roff_line(inline(cells[0])), roff_line(inline(cells[1]))]
            i += 1
            continue
        if not line.strip():
            i += 1
            continue
        # A paragraph or a list item runs to the next blank line, item or heading.
        item = line.startswith("* ")
        text = [line[2:] if item else line]
        i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].startswith(("* ", "## ", "```")):
            text.append(lines[i].strip())
            i += 1
        joined = " ".join(text)
        # "* `term`: text" (or several terms, comma-separated) is a tagged paragraph.
        term = re.match(r"((?:`[^`]+`(?:, )?)+): (.*)", joined) if item else None
        if term and section in ("ARGUMENTS", "ERRORS", "ENVIRONMENT", "OPTIONS"):
            style = "\\fI%s\\fR" if section == "ARGUMENTS" else "\\fB%s\\fR"
            tag = escape(term.group(1).replace("`", "")).replace("-", "\\-")
            out += [".TP", roff_line(style % tag), roff_line(inline(term.group(2)))]
        elif item:
            out += [".IP \\(bu 2", roff_line(inline(joined))]
        else:
            out += [".PP", roff_line(inline(joined))]
    return out


def render(page, decls, spec, version):
    title = ".TH %s %s \"\" \"flexrma %s\" \"flexrma\"" % (page.name, page.section, version)
    names = page.synopsis or [page.name]
    out = [".\\\" Generated by docs/man/mkpages.py from %s: edit that file, not this one."
           % os.path.relpath(page.path, os.path.dirname(os.path.dirname(os.path.dirname(page.path)))),
           ".\\\" spec: " + " ".join(page.spec), title,
           ".nh",  # no hyphens inside the long MPI names,
           ".ad l",  # nor wide gaps beside them
           ".SH NAME",
           roff_line(escape(", ".join(dict.fromkeys([page.name] + names)))
                     .replace("-", "\\-") + " \\- " + inline(page.meta["summary"]))]
    if page.synopsis:
        out += [".SH SYNOPSIS", ".nf", "#include <flexrma.h>"]
        for name in page.synopsis:
            if name not in decls:
                sys.exit("mkpages: %s: %s is not declared in include/flexrma.h" % (page.path, name))
            out.append("")
            out += [roff_line(escape(l).replace("-", "\\-")) for l in decls[name].split("\n")]
        out.append(".fi")
    out += render_body(page, spec)
    see = [s.strip() for s in page.meta.get("see also", "").split(",") if s.strip()]
    if page.name != "flexrma":
        see.append("flexrma(7)")
    out += [".SH SEE ALSO", ",\n".join("\\fB%s\\fR(%s)" % re.fullmatch(r"(\S+)\((\d)\)", s).groups()
                                       for s in see)]
    if page.spec:
        out += [".PP", "The flexrma specification, section%s %s: \\fIdocs/specification.md\\fR in the "
                "sources, installed as \\fIshare/doc/flexrma/specification.md\\fR. It is the reference; "
                "this page summarizes it." % ("s" if len(page.spec) > 1 else "", ", ".join(page.spec))]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, outdir, version = sys.argv[1:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(src)))
    with open(os.path.join(root, "include", "flexrma.h"), encoding="utf-8") as f:
        decls = header_declarations(f.read())
    with open(os.path.join(root, "docs", "specification.md"), encoding="utf-8") as f:
        spec = f.read()
    written = {}
    for fname in sorted(os.listdir(src)):
        if not re.fullmatch(r".+\.\d\.md", fname):
            continue
        page = Page(os.path.join(src, fname))
        sub = "man" + page.section
        os.makedirs(os.path.join(outdir, sub), exist_ok=True)
        target = "%s/%s.%s" % (sub, page.name, page.section)
        written[target] = render(page, decls, spec, version)
        for name in page.synopsis:
            links = [name] + (["P" + name] if is_function(decls[name]) else [])
            for link in links:
                if link != page.name:
                    written["%s/%s.%s" % (sub, link, page.section)] = ".so %s\n" % target
    for rel, text in written.items():
        path = os.path.join(outdir, rel)
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = f.read()
        if old != text:  # leave unchanged pages alone: their time stamps stay
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    # Pages of a source since removed must not linger and be installed.
    for sub in os.listdir(outdir):
        if re.fullmatch(r"man\d", sub):
            for fname in os.listdir(os.path.join(outdir, sub)):
                if "%s/%s" % (sub, fname) not in written:
                    os.remove(os.path.join(outdir, sub, fname))


if __name__ == "__main__":
    main()
