#!/usr/bin/env python3
"""Checks the relative links of the repository's Markdown files.

  scripts/check_doc_links.py [FILE.md ...]

Without arguments it checks every Markdown file git tracks (symbolic links
left out: test/docs/*.md are docs/*.md). Each relative link must name an
existing file, and a #fragment a heading of the target, spelled as GitHub
spells anchors. README.md must link only inside the repository. Links in
code spans and fenced blocks are not links. Exits 1 on any problem.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r'\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')


def slug(heading):
    heading = re.sub(r'[^\w\- ]', '', heading.strip().lower())
    return heading.replace(' ', '-')


def lines_outside_code(path):
    fence = False
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith('```'):
                fence = not fence
            elif not fence:
                yield number, line


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        for _, line in lines_outside_code(path):
            m = re.match(r'(#{1,6})\s+(.*?)\s*#*\s*$', line)
            if m:
                s = slug(m.group(2).replace('`', ''))
                n = seen.get(s, 0)
                found.add(s if n == 0 else '%s-%d' % (s, n))
                seen[s] = n + 1
        cache[path] = found
    return cache[path]


def check(path):
    problems = []
    top_readme = os.path.abspath(path) == os.path.join(ROOT, 'README.md')
    for number, line in lines_outside_code(path):
        for target in LINK.findall(re.sub(r'`[^`]*`', '', line)):
            where = '%s:%d' % (os.path.relpath(path, ROOT), number)
            if re.match(r'[a-zA-Z][a-zA-Z+.-]*:', target):
                if top_readme:
                    problems.append('%s: link outside the repository: %s' % (where, target))
                continue
            file, _, fragment = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                problems.append('%s: no such file: %s' % (where, target))
            elif fragment and dest.endswith('.md') and fragment not in anchors(dest):
                problems.append('%s: no heading #%s in %s' % (where, fragment, os.path.relpath(dest, ROOT)))
    return problems


def main():
    if len(sys.argv) > 1:
        files = sys.argv[1:]
    else:
        listed = subprocess.run(['git', '-C', ROOT, 'ls-files', '*.md'], check=True,
                                capture_output=True, text=True).stdout.split()
        files = [os.path.join(ROOT, f) for f in listed]
        files = [f for f in files if not os.path.islink(f)]
    problems = [p for f in files for p in check(f)]
    for p in problems:
        print(p)
    print('%d file(s), %d problem(s)' % (len(files), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
