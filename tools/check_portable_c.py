#!/usr/bin/env python3
"""The MSVC check we can run without MSVC: every GNU-only construct in opara.h (__attribute__,
__builtin_*, __atomic_*, __thread, __typeof, __sync_*, __int128, statement expressions) must sit
inside a preprocessor branch that names __GNUC__ or __clang__ (directly, or through a macro defined
only inside such a branch), so a compiler that defines neither (MSVC) never sees one. The one
exception is the POSIX branch of the atomics (!defined(_WIN32)): every POSIX compiler opara supports
(gcc, clang, icx) has __atomic_*; Windows uses the Interlocked functions. String literals (the
embedded PTX) are not code. Prints one line per finding and "N passed, N failed"."""
import re
import sys

GNU_ONLY = re.compile(r'(?<![A-Za-z0-9_])(__builtin_|__atomic_|__attribute__|__thread\b|__typeof|__sync_|__int128)|\(\{')
GUARDS = ('__GNUC__', '__clang__')


def posix(cond):
    """A branch that only a non-Windows build takes: #if !defined(_WIN32), or the #else of #if defined(_WIN32)."""
    c = cond.replace(' ', '')
    return '!defined(_WIN32)' in c or c in ('!(defined(_WIN32))', '!(_WIN32)')


def findings(lines):
    stack, gnu_macros, out = [], set(), []
    for number, line in enumerate(lines, 1):
        s = line.strip()
        m = re.match(r'#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)', s)
        if m:
            kind, cond = m.group(1), m.group(2)
            gnu = any(g in cond for g in GUARDS) or any(re.search(r'\b%s\b' % re.escape(x), cond) for x in gnu_macros)
            if kind in ('if', 'ifdef', 'ifndef'):
                stack.append((cond, gnu))
            elif kind == 'elif':
                stack[-1] = (cond, gnu)
            elif kind == 'else':
                stack[-1] = ('!(' + stack[-1][0] + ')', False)
            elif stack:
                stack.pop()
            continue
        d = re.match(r'#\s*define\s+(\w+)', s)
        if d and any(g for _, g in stack):
            gnu_macros.add(d.group(1))
        if s.startswith(('#', '*', '/*', '"')):
            continue
        code = re.sub(r'/\*.*?\*/', '', line).split('/*')[0]
        code = re.sub(r'"(\\.|[^"\\])*"', '""', code)
        hit = GNU_ONLY.search(code)
        if not hit or any(g for _, g in stack):
            continue
        if hit.group(1) == '__atomic_' and any(posix(c) for c, _ in stack):
            continue
        out.append((number, s[:100]))
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else 'opara.h'
    bad = findings(open(path, encoding='utf-8').read().split('\n'))
    for number, text in bad:
        print('FAIL %s:%d: a GNU-only construct outside a __GNUC__/__clang__ branch: %s' % (path, number, text))
    if not bad:
        print('ok   every GNU-only construct of %s is inside a __GNUC__/__clang__ branch' % path)
    print('%d passed, %d failed' % (0 if bad else 1, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
