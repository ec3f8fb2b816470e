#!/usr/bin/env python3
"""check_names.py SCHEMA.xml

A schema consumers generate decoders from with sbe-tool must use no name that a target language
reserves: sbe-tool refuses such a name for that target ("Invalid property name='new'"). Checks
every name of the schema (types, composites, enums and their values, sets and their choices,
messages, fields, groups, data) against the reserved words of C, C++ and Java, and prints each
offender with the languages that reserve it.
"""

import sys
import xml.etree.ElementTree as ET

C = set('''auto break case char const continue default do double else enum extern float for goto
if inline int long register restrict return short signed sizeof static struct switch typedef union
unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn
_Static_assert _Thread_local'''.split())
CPP = C - {'restrict'} | set('''alignas alignof and and_eq asm bitand bitor bool catch char8_t
char16_t char32_t class compl concept consteval constexpr constinit const_cast co_await co_return
co_yield decltype delete dynamic_cast explicit export false friend mutable namespace new noexcept
not not_eq nullptr operator or or_eq private protected public reinterpret_cast requires
static_assert static_cast template this thread_local throw true try typeid typename using virtual
wchar_t xor xor_eq'''.split())
JAVA = set('''abstract assert boolean break byte case catch char class const continue default do
double else enum extends final finally float for goto if implements import instanceof int interface
long native new package private protected public return short static strictfp super switch
synchronized this throw throws transient try void volatile while true false null var yield record
sealed permits'''.split())
LANGUAGES = (('C', C), ('C++', CPP), ('Java', JAVA))


def main(path):
    bad = []
    for el in ET.parse(path).iter():
        name = el.get('name')
        if name is None:
            continue
        langs = [lang for lang, words in LANGUAGES if name in words]
        if langs:
            tag = el.tag.split('}')[-1]
            bad.append('%s %r is reserved in %s' % (tag, name, ', '.join(langs)))
    for line in bad:
        print('FAIL: ' + line)
    if not bad:
        print('ok: no name of %s is a C, C++ or Java keyword' % path)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
