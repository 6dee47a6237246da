#!/usr/bin/env python3
"""check-pages.py SRC MANDIR - the generated man pages against what they document (TAP).

SRC is the source tree, MANDIR the build's man/ (man3/, man7/). Checks that:
  - every name include/flexrma.h declares (function, type, variable, macro) has a page;
  - each page's SYNOPSIS declares exactly what flexrma.h declares, character for character
    but for the line breaks and spaces;
  - each page's ARGUMENTS are exactly the parameters of its functions;
  - each error class a page names under ERRORS appears in the specification sections it cites;
  - every `.so` link and every SEE ALSO reference to a flexrma page resolves;
  - the C declarations quoted in docs/specification.md are flexrma.h's;
  - flexrma(7) lists every name flexrma.h declares (but the PMPI_ ones);
  - every FLEXRMA_ variable the library reads is in the specification's table (section 10) and
    in flexrma(7), every field of the FLEXRMA_STATS line and every option of flexrma-run too.
The header is parsed here on its own (regular expressions over the whole text), not with the
generator's code, so that a mistake in one is not hidden by the same mistake in the other.
"""
import os
import re
import sys

src, mandir = sys.argv[1:3]
results = []


def check(description, problems):
    results.append((description, problems))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def squash(text):
    """Whitespace-insensitive form: runs of blanks to one space, none next to punctuation."""
    text = re.sub(r"\s+", " ", text.strip())
    return re.sub(r" ?([(),;*\[\]{}]) ?", r"\1", text)


# ---- flexrma.h ----
header = read(os.path.join(src, "include", "flexrma.h"))
code = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
functions = {m.group(2): m.group(1)
             for m in re.finditer(r"^(int\s+(\w+)\s*\([^;]*\);)", code, re.M)}
declared = dict(functions)
for m in re.finditer(r"^(typedef struct (\w+) \{.*?\} \2;)", code, re.M | re.S):
    declared[m.group(2)] = m.group(1)
for m in re.finditer(r"^(extern [^;]*?(\w+);)", code, re.M):
    declared[m.group(2)] = m.group(1)
for m in re.finditer(r"^(#define (\w+).*)$", code, re.M):
    if m.group(2) != "FLEXRMA_H":
        declared[m.group(2)] = m.group(1)


def parameters(decl):
    inside = decl[decl.index("(") + 1:decl.rindex(")")]
    return [re.search(r"(\w+)\s*(?:\[\s*\])?\s*$", p).group(1) for p in inside.split(",")]


# ---- the pages ----
pages = {}  # "man3/NAME.3" -> roff text
for sub in sorted(os.listdir(mandir)):
    if re.fullmatch(r"man\d", sub):
        for fname in sorted(os.listdir(os.path.join(mandir, sub))):
            pages["%s/%s" % (sub, fname)] = read(os.path.join(mandir, sub, fname))


def resolve(rel):
    """The page a name's file leads to, following one .so link; None when it does not exist."""
    text = pages.get(rel)
    if text is None:
        return None
    m = re.match(r"\.so (\S+)\n$", text)
    return resolve(m.group(1)) if m else rel


def unroff(line):
    line = re.sub(r"\\f[BIRP]", "", line)
    return line.replace("\\&", "").replace("\\-", "-").replace("\\(aq", "'").replace("\\e", "\\")


def sections(text):
    """{TITLE: [lines]} of a page."""
    out, current = {}, None
    for line in text.split("\n"):
        if line.startswith(".SH "):
            current = line[4:].strip().strip('"')
            out[current] = []
        elif current:
            out[current].append(line)
    return out


full_pages = {rel: text for rel, text in pages.items() if not text.startswith(".so ")}

# Every declared name has a page.
check("every name flexrma.h declares has a page (%d names)" % len(declared),
      ["no page for %s (man3/%s.3)" % (n, n) for n in sorted(declared)
       if resolve("man3/%s.3" % n) is None])

# SYNOPSIS = the header's declarations.
problems = []
synopsis_of = {}
for rel, text in full_pages.items():
    secs = sections(text)
    if not rel.startswith("man3/") or "SYNOPSIS" not in secs:
        continue
    body = [unroff(l) for l in secs["SYNOPSIS"] if not l.startswith(".")]
    decls = [d for d in "\n".join(body).split("\n\n") if d.strip()]
    if not decls or decls[0].strip() != "#include <flexrma.h>":
        problems.append("%s: the synopsis does not start with #include <flexrma.h>" % rel)
    names = []
    for d in decls[1:]:
        m = (re.match(r"int\s+(\w+)\s*\(", d) or re.match(r"typedef struct (\w+)", d)
             or re.match(r"#define (\w+)", d) or re.search(r"extern .*?(\w+);", d))
        if not m or m.group(1) not in declared:
            problems.append("%s: declares what flexrma.h does not: %s" % (rel, squash(d)))
            continue
        names.append(m.group(1))
        if squash(d) != squash(declared[m.group(1)]):
            problems.append("%s: %s differs from flexrma.h:\n  page:   %s\n  header: %s"
                            % (rel, m.group(1), squash(d), squash(declared[m.group(1)])))
    synopsis_of[rel] = names
for name in declared:
    page = resolve("man3/%s.3" % name)
    pmpi = name.startswith("PMPI") and name[1:] in functions
    if page and not pmpi and name not in synopsis_of.get(page, []):
        problems.append("%s: the page of %s does not declare it" % (page, name))
for name in functions:  # the PMPI_ names are documented on the MPI_ name's page
    if name.startswith("PMPI") and name[1:] in functions:
        if resolve("man3/%s.3" % name) != resolve("man3/%s.3" % name[1:]):
            problems.append("%s has another page than %s" % (name, name[1:]))
check("every page's synopsis is flexrma.h's declarations", problems)

# ARGUMENTS = the parameters of the page's functions.
problems = []
for rel, names in synopsis_of.items():
    want = []
    for n in names:
        if n in functions:
            want += [p for p in parameters(functions[n]) if p not in want]
    secs = sections(full_pages[rel])
    got = []
    lines = secs.get("ARGUMENTS", [])
    for i, line in enumerate(lines):
        if line == ".TP":
            got.append(unroff(lines[i + 1]))
    if sorted(got) != sorted(want):
        problems.append("%s: ARGUMENTS lists %s; its functions take %s" % (rel, got, want))
check("every page's ARGUMENTS are exactly its functions' parameters", problems)

# ERRORS named are in the cited specification sections.
spec = read(os.path.join(src, "docs", "specification.md"))


def spec_section(number):
    depth = number.count(".") + 2
    start = re.search(r"^#{%d} %s[. ]" % (depth, re.escape(number)), spec, re.M)
    if not start:
        return None
    rest = spec[start.end():]
    end = re.search(r"^#{2,%d} " % depth, rest, re.M)
    return rest[:end.start()] if end else rest


problems = []
for rel, text in full_pages.items():
    m = re.search(r'^\.\\" spec: (.*)$', text, re.M)
    cited = m.group(1).split() if m else []
    texts = []
    for number in cited:
        t = spec_section(number)
        if t is None:
            problems.append("%s: cites section %s, which the specification lacks" % (rel, number))
        else:
            texts.append(t)
    errors = set(re.findall(r"MPI_ERR_\w+", "\n".join(sections(text).get("ERRORS", []))))
    for e in sorted(errors):
        if not any(e in t for t in texts):
            problems.append("%s: names %s, which its sections (%s) of the specification do not"
                            % (rel, e, " ".join(cited) or "none"))
check("every error class a page names is in the specification sections it cites", problems)

# Links and references resolve.
problems = []
for rel, text in pages.items():
    m = re.match(r"\.so (\S+)\n$", text)
    if m and m.group(1) not in full_pages:
        problems.append("%s: .so %s, which is not a page" % (rel, m.group(1)))
    for name, sec in re.findall(r"\\fB(\w+)\\fR\((\d)\)", "\n".join(sections(text).get("SEE ALSO", []))):
        ours = name in declared or name == "flexrma"
        if ours and resolve("man%s/%s.%s" % (sec, name, sec)) is None:
            problems.append("%s: SEE ALSO %s(%s), which is not a page" % (rel, name, sec))
check("every .so link and SEE ALSO reference to a flexrma page resolves", problems)

# The specification's quoted declarations.
problems = []
quoted = 0
for block in re.findall(r"^```c\n(.*?)^```", spec, re.M | re.S):
    for m in re.finditer(r"int\s+(\w+)\s*\([^;]*\);", block):
        quoted += 1
        if m.group(1) not in functions:
            problems.append("the specification declares %s, which flexrma.h does not" % m.group(1))
        elif squash(m.group(0)) != squash(functions[m.group(1)]):
            problems.append("the specification's %s differs from flexrma.h:\n  spec:   %s\n  header: %s"
                            % (m.group(1), squash(m.group(0)), squash(functions[m.group(1)])))
if quoted == 0:
    problems.append("no declaration found in the specification's C blocks")
check("the specification's C declarations (%d) are flexrma.h's" % quoted, problems)

# Environment, statistics, flexrma-run's options: in flexrma(7).
manual = unroff(full_pages.get("man7/flexrma.7", ""))
section10 = spec_section("10") or ""
variables = set()
for top in ("shim", "ext"):
    for d, _, files in os.walk(os.path.join(src, top)):
        for f in files:
            if f.endswith((".c", ".h")):
                variables |= set(re.findall(r'"(FLEXRMA_[A-Z0-9_]+)"', read(os.path.join(d, f))))
problems = []
for v in sorted(variables):
    if v not in section10:
        problems.append("%s is read by the library but not in the specification's section 10" % v)
    if v not in manual:
        problems.append("%s is read by the library but not in flexrma(7)" % v)
if not variables:
    problems.append("no FLEXRMA_ variable found in shim/ and ext/")
check("every FLEXRMA_ variable the library reads (%d) is in the specification and flexrma(7)"
      % len(variables), problems)

check("flexrma(7) lists every name flexrma.h declares but the PMPI_ ones",
      ["%s is not in flexrma(7)" % n for n in sorted(declared)
       if not n.startswith("PMPI") and not re.search(r"\b%s\b" % n, manual)])

stats = read(os.path.join(src, "shim", "api", "stats.c"))
fmt = re.search(r'"flexrma stats: rank %d win %d: ((?:[^"]|"\s*")*)"', stats)
fields = set(re.findall(r"[a-z]+", re.sub(r"%\w+|\\n", " ", fmt.group(1)))) if fmt else set()
statistics = unroff("\n".join(sections(full_pages.get("man7/flexrma.7", "")).get("STATISTICS", [])))
check("every field of the FLEXRMA_STATS line (%d words) is described in flexrma(7)" % len(fields),
      (["the statistics line's format was not found in shim/api/stats.c"] if not fields else [])
      + ["%s is printed but not described" % f for f in sorted(fields)
         if not re.search(r"\b%s\b" % f, statistics)])

run = read(os.path.join(src, "scripts", "flexrma-run"))
usage = run[run.index("Options:"):run.index("Environment:")]
options = re.findall(r"(?<![\w-])(--?[a-z][\w-]*|--)(?=[ ,\n])", usage)
check("every option of flexrma-run (%d) is in flexrma(7)" % len(options),
      (["no option found in flexrma-run's usage"] if not options else [])
      + ["%s is not in flexrma(7)'s OPTIONS" % o for o in options
         if o not in "\n".join(sections(manual).get("OPTIONS", []))])

print("1..%d" % len(results))
failed = 0
for n, (description, problems) in enumerate(results, 1):
    print("%s %d - %s" % ("not ok" if problems else "ok", n, description))
    for p in problems:
        print("\n".join("# " + l for l in p.split("\n")))
    failed += bool(problems)
sys.exit(1 if failed else 0)
