#!/usr/bin/env python3
"""sbe_c_gen.py: FIX Simple Binary Encoding (SBE) schema -> one C11 header of flyweights.

Usage:
    sbe_c_gen.py SCHEMA.xml OUT.h              generate the codec header
    sbe_c_gen.py --tests SCHEMA.xml OUT.c H    generate a cmocka round-trip test for every message
                                               of the schema (H: the header name to #include)

The schema is read with xml.etree only (no third-party packages). Any namespace prefix is
accepted (sbe:, ns2:, ...): elements are matched by their local name. The generated API is
documented in the comment block at the top of the generated header and in codecs/sbe/README.md.
"""

import hashlib
import re
import sys
import xml.etree.ElementTree as ET

# --------------------------------------------------------------------------------------------
# Primitive types: C type, size, SBE default null/min/max.
# --------------------------------------------------------------------------------------------

PRIMS = {
    #  name      ctype       size  null                    min                      max
    'char':   ('char',      1, 0,                      0x20,                    0x7e),
    'int8':   ('int8_t',    1, -(1 << 7),              -(1 << 7) + 1,           (1 << 7) - 1),
    'uint8':  ('uint8_t',   1, (1 << 8) - 1,           0,                       (1 << 8) - 2),
    'int16':  ('int16_t',   2, -(1 << 15),             -(1 << 15) + 1,          (1 << 15) - 1),
    'uint16': ('uint16_t',  2, (1 << 16) - 1,          0,                       (1 << 16) - 2),
    'int32':  ('int32_t',   4, -(1 << 31),             -(1 << 31) + 1,          (1 << 31) - 1),
    'uint32': ('uint32_t',  4, (1 << 32) - 1,          0,                       (1 << 32) - 2),
    'int64':  ('int64_t',   8, -(1 << 63),             -(1 << 63) + 1,          (1 << 63) - 1),
    'uint64': ('uint64_t',  8, (1 << 64) - 1,          0,                       (1 << 64) - 2),
    'float':  ('float',     4, 'nan',                  '-FLT_MAX',              'FLT_MAX'),
    'double': ('double',    8, 'nan',                  '-DBL_MAX',              'DBL_MAX'),
}


class SchemaError(Exception):
    pass


def local(tag):
    """Element local name, whatever namespace prefix the schema used."""
    return tag.rsplit('}', 1)[-1]


def snake(name):
    """CamelCase / ACRONYMCase schema names -> snake_case C names."""
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', name)
    s = re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1_\2', s)
    s = re.sub(r'[^A-Za-z0-9]+', '_', s)
    return s.strip('_').lower()


def upper(name):
    return snake(name).upper()


def c_literal(prim, value):
    """A C expression of the given primitive type for an integer (or float keyword) value."""
    if prim in ('float', 'double'):
        if value == 'nan':
            return 'NAN' if prim == 'double' else '((float)NAN)'
        if isinstance(value, str):
            return value
        return repr(float(value)) + ('f' if prim == 'float' else '')
    ctype, size = PRIMS[prim][0], PRIMS[prim][1]
    v = int(value)
    if prim == 'char':
        return '((char)%d)' % v
    bits = size * 8
    if prim.startswith('u'):
        if bits == 64:
            return 'UINT64_C(%d)' % v
        if bits == 32:
            return 'UINT32_C(%d)' % v
        return '((%s)%d)' % (ctype, v)
    if v == -(1 << (bits - 1)):
        return '((%s)(-INT%d_C(%d) - 1))' % (ctype, bits, (1 << (bits - 1)) - 1)
    if bits == 64:
        return 'INT64_C(%d)' % v
    if bits == 32:
        return 'INT32_C(%d)' % v
    return '((%s)%d)' % (ctype, v)


def parse_number(prim, text):
    text = text.strip()
    if prim in ('float', 'double'):
        return float(text)
    if prim == 'char':
        if len(text) != 1:
            raise SchemaError('char value %r is not one character' % text)
        return ord(text)
    return int(text, 0)


# --------------------------------------------------------------------------------------------
# Schema model
# --------------------------------------------------------------------------------------------

class Prim:
    """An encoded type: a primitive, maybe an array (length), optional or constant."""

    def __init__(self, name, prim, length=1, presence='required', null=None, minv=None,
                 maxv=None, const=None, char_encoding=None, since=0):
        if prim not in PRIMS:
            raise SchemaError('unknown primitiveType %r (type %s)' % (prim, name))
        self.kind = 'prim'
        self.name = name
        self.prim = prim
        self.length = length
        self.presence = presence
        self.null = PRIMS[prim][2] if null is None else null
        self.min = PRIMS[prim][3] if minv is None else minv
        self.max = PRIMS[prim][4] if maxv is None else maxv
        self.const = const            # int/float, or str for a constant char array
        self.char_encoding = char_encoding
        self.since = since

    @property
    def ctype(self):
        return PRIMS[self.prim][0]

    @property
    def size(self):
        return 0 if self.presence == 'constant' else PRIMS[self.prim][1] * self.length


class Enum:
    def __init__(self, name, encoding, values, since=0):
        self.kind = 'enum'
        self.name = name
        self.encoding = encoding      # Prim
        self.values = values          # [(name, int)]
        self.since = since

    @property
    def size(self):
        return self.encoding.size

    def value_of(self, name):
        for n, v in self.values:
            if n == name:
                return v
        raise SchemaError('enum %s has no value %s' % (self.name, name))


class Set:
    def __init__(self, name, encoding, choices, since=0):
        self.kind = 'set'
        self.name = name
        self.encoding = encoding
        self.choices = choices        # [(name, bit)]
        self.since = since

    @property
    def size(self):
        return self.encoding.size


class Member:
    def __init__(self, name, type_, offset, const_value=None):
        self.name = name
        self.type = type_
        self.offset = offset
        self.const_value = const_value


class Composite:
    def __init__(self, name, since=0):
        self.kind = 'composite'
        self.name = name
        self.members = []
        self.size = 0
        self.since = since

    def member(self, name):
        for m in self.members:
            if m.name == name:
                return m
        return None


class Field:
    def __init__(self, name, fid, type_, offset, since, presence, const_value, const_enum):
        self.name = name
        self.id = fid
        self.type = type_
        self.offset = offset
        self.since = since
        self.presence = presence      # field-level override ('optional'/'constant'/None)
        self.const_value = const_value
        self.const_enum = const_enum  # (Enum, value name) for valueRef constants

    @property
    def size(self):
        if self.presence == 'constant':
            return 0
        return self.type.size


class Data:
    def __init__(self, name, did, type_, since):
        self.name = name
        self.id = did
        self.type = type_
        self.since = since
        self.length = type_.member('length')
        self.var = type_.member('varData')
        if self.length is None or self.var is None:
            raise SchemaError('data %s: type %s needs length and varData' % (name, type_.name))


class Block:
    """A message or a repeating group: fixed fields, then groups, then var data."""

    def __init__(self, name, bid, since, parent=None):
        self.name = name
        self.id = bid
        self.since = since
        self.parent = parent
        self.fields = []
        self.groups = []
        self.datas = []
        self.block_length = 0
        self.dimension = None

    @property
    def path(self):
        return (self.parent.path + '_' if self.parent else '') + snake(self.name)

    @property
    def is_group(self):
        return self.parent is not None

    def base_length(self):
        """Bytes of the fixed block every acting version must carry (fields not added later)."""
        end = 0
        for f in self.fields:
            if f.size and f.since <= self.since:
                end = max(end, f.offset + f.size)
        return end


class Schema:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        if local(root.tag) != 'messageSchema':
            raise SchemaError('%s: root element is %s, not messageSchema' % (path, root.tag))
        self.package = root.get('package') or 'sbe'
        self.prefix = re.sub(r'[^a-z0-9]+', '_', self.package.lower()).strip('_')
        self.id = int(root.get('id', '0'))
        self.version = int(root.get('version', '0'))
        self.big_endian = root.get('byteOrder', 'littleEndian') == 'bigEndian'
        self.header_type = root.get('headerType', 'messageHeader')
        self.description = root.get('description', '')
        self.raw = {}
        for types in root:
            if local(types.tag) != 'types':
                continue
            for t in types:
                self._collect(t)
        self.types = {}
        self.order = []
        for name in list(self.raw):
            self.resolve(name)
        self.header = self.resolve(self.header_type)
        if self.header.kind != 'composite':
            raise SchemaError('header type %s is not a composite' % self.header_type)
        for m in ('blockLength', 'templateId', 'schemaId', 'version'):
            if self.header.member(m) is None:
                raise SchemaError('header %s has no %s' % (self.header_type, m))
        self.messages = []
        for m in root:
            if local(m.tag) == 'message':
                self.messages.append(self._message(m))
        ids = [m.id for m in self.messages]
        if len(ids) != len(set(ids)):
            raise SchemaError('duplicate message ids')

    # ---- types ------------------------------------------------------------------------------

    def _collect(self, el):
        name = el.get('name')
        if name is None:
            raise SchemaError('type without a name')
        if name in self.raw:
            raise SchemaError('type %s defined twice' % name)
        self.raw[name] = el
        if local(el.tag) == 'composite':
            # Enums, sets and composites declared inside a composite are global types too.
            for child in el:
                if local(child.tag) in ('enum', 'set', 'composite'):
                    self._collect(child)

    def resolve(self, name):
        if name in self.types:
            t = self.types[name]
            if t is None:
                raise SchemaError('type %s refers to itself' % name)
            return t
        if name not in self.raw:
            if name in PRIMS:
                return Prim(name, name)
            raise SchemaError('unknown type %s' % name)
        self.types[name] = None
        t = self._build(self.raw[name])
        self.types[name] = t
        self.order.append(t)
        return t

    def _prim_el(self, el):
        prim = el.get('primitiveType')
        length = int(el.get('length', '1'))
        presence = el.get('presence', 'required')
        const = None
        if presence == 'constant':
            ref = el.get('valueRef')
            text = (el.text or '').strip()
            if ref:
                ename, vname = ref.split('.', 1)
                const = self.resolve(ename).value_of(vname)
            elif prim == 'char' and (len(text) != 1 or length > 1):
                const = text
            else:
                const = parse_number(prim, text)
        null = el.get('nullValue')
        minv = el.get('minValue')
        maxv = el.get('maxValue')
        return Prim(el.get('name'), prim, length, presence,
                    parse_number(prim, null) if null is not None else None,
                    parse_number(prim, minv) if minv is not None else None,
                    parse_number(prim, maxv) if maxv is not None else None,
                    const, el.get('characterEncoding'), int(el.get('sinceVersion', '0')))

    def _encoding(self, name):
        t = self.resolve(name)
        if t.kind != 'prim' or t.length != 1:
            raise SchemaError('encodingType %s is not a single primitive' % name)
        return t

    def _build(self, el):
        kind = local(el.tag)
        name = el.get('name')
        since = int(el.get('sinceVersion', '0'))
        if kind == 'type':
            return self._prim_el(el)
        if kind == 'enum':
            enc = self._encoding(el.get('encodingType'))
            values = [(v.get('name'), parse_number(enc.prim, v.text or ''))
                      for v in el if local(v.tag) == 'validValue']
            return Enum(name, enc, values, since)
        if kind == 'set':
            enc = self._encoding(el.get('encodingType'))
            choices = [(c.get('name'), int(c.text.strip())) for c in el if local(c.tag) == 'choice']
            for cname, bit in choices:
                if bit >= enc.size * 8:
                    raise SchemaError('set %s choice %s bit %d too large' % (name, cname, bit))
            return Set(name, enc, choices, since)
        if kind == 'composite':
            comp = Composite(name, since)
            offset = 0
            for child in el:
                ck = local(child.tag)
                if ck == 'ref':
                    t = self.resolve(child.get('type'))
                elif ck == 'type':
                    t = self._prim_el(child)
                elif ck in ('enum', 'set', 'composite'):
                    t = self.resolve(child.get('name'))
                else:
                    continue
                if child.get('offset') is not None:
                    off = int(child.get('offset'))
                    if off < offset:
                        raise SchemaError('composite %s member %s overlaps' % (name, child.get('name')))
                    offset = off
                comp.members.append(Member(child.get('name'), t, offset))
                offset += t.size
            comp.size = offset
            return comp
        raise SchemaError('unknown type element %s' % kind)

    # ---- messages ----------------------------------------------------------------------------

    def _message(self, el):
        msg = Block(el.get('name'), int(el.get('id')), int(el.get('sinceVersion', '0')))
        self._block(msg, el)
        bl = el.get('blockLength')
        if bl is not None:
            if int(bl) < msg.block_length:
                raise SchemaError('message %s: blockLength %s < fields %d' %
                                  (msg.name, bl, msg.block_length))
            msg.block_length = int(bl)
        return msg

    def _block(self, blk, el):
        offset = 0
        for child in el:
            k = local(child.tag)
            if k == 'field':
                f = self._field(child, offset, blk)
                if f.size:
                    offset = f.offset + f.size
                blk.fields.append(f)
            elif k == 'group':
                if blk.datas:
                    raise SchemaError('%s: group after data' % blk.name)
                blk.groups.append(self._group(child, blk))
            elif k == 'data':
                t = self.resolve(child.get('type'))
                if t.kind != 'composite':
                    raise SchemaError('data %s type is not a composite' % child.get('name'))
                since = max(int(child.get('sinceVersion', '0')), blk.since)
                blk.datas.append(Data(child.get('name'), int(child.get('id')), t, since))
        blk.block_length = offset

    def _group(self, el, parent):
        since = max(int(el.get('sinceVersion', '0')), parent.since)
        g = Block(el.get('name'), int(el.get('id')), since, parent)
        dim = self.resolve(el.get('dimensionType', 'groupSizeEncoding'))
        if dim.kind != 'composite' or not dim.member('blockLength') or not dim.member('numInGroup'):
            raise SchemaError('group %s: bad dimensionType' % g.name)
        g.dimension = dim
        self._block(g, el)
        bl = el.get('blockLength')
        if bl is not None:
            if int(bl) < g.block_length:
                raise SchemaError('group %s: blockLength %s < fields %d' % (g.name, bl, g.block_length))
            g.block_length = int(bl)
        return g

    def _field(self, el, running, blk):
        t = self.resolve(el.get('type'))
        presence = el.get('presence')
        const_value = None
        const_enum = None
        if presence == 'constant':
            ref = el.get('valueRef')
            if ref is None:
                raise SchemaError('constant field %s needs valueRef' % el.get('name'))
            ename, vname = ref.split('.', 1)
            e = self.resolve(ename)
            const_value = e.value_of(vname)
            const_enum = (e, vname)
        elif t.kind == 'prim' and t.presence == 'constant':
            presence = 'constant'
        off = el.get('offset')
        offset = running if off is None else int(off)
        since = max(int(el.get('sinceVersion', '0')), getattr(t, 'since', 0), blk.since)
        if presence != 'constant' and offset < running:
            raise SchemaError('field %s offset %d overlaps the previous field' % (el.get('name'), offset))
        return Field(el.get('name'), int(el.get('id', '0')), t, offset, since, presence,
                     const_value, const_enum)


# --------------------------------------------------------------------------------------------
# Leaves: every primitive slot reachable from a field, with its absolute offset.
# --------------------------------------------------------------------------------------------

class Leaf:
    def __init__(self, names, offset, t, const=None, enum=None, set_=None, presence=None):
        self.names = names            # path of schema names, e.g. ['MDEntryPx', 'mantissa']
        self.offset = offset
        self.t = t                    # Prim (the encoding)
        self.const = const            # constant value (int/float/str) or None
        self.enum = enum
        self.set = set_
        self.presence = presence or t.presence

    @property
    def suffix(self):
        return '_'.join(snake(n) for n in self.names)


def leaves_of(t, names, offset, presence=None):
    if t.kind == 'prim' and t.length == 0:
        return []  # the varData slot of a var-data composite: read with get_<data>()
    if t.kind == 'prim':
        const = t.const if t.presence == 'constant' else None
        return [Leaf(names, offset, t, const, presence=presence)]
    if t.kind == 'enum':
        return [Leaf(names, offset, t.encoding, enum=t, presence=presence)]
    if t.kind == 'set':
        return [Leaf(names, offset, t.encoding, set_=t)]
    out = []
    for m in t.members:
        out += leaves_of(m.type, names + [m.name], offset + m.offset)
    return out


def field_leaves(f):
    if f.const_enum is not None:
        e, _ = f.const_enum
        return [Leaf([f.name], f.offset, Prim(e.encoding.name, e.encoding.prim, presence='constant',
                                              const=f.const_value), const=f.const_value, enum=e)]
    if f.presence == 'optional' and f.type.kind == 'prim':
        return leaves_of(f.type, [f.name], f.offset, presence='optional')
    return leaves_of(f.type, [f.name], f.offset)


# --------------------------------------------------------------------------------------------
# Header generator
# --------------------------------------------------------------------------------------------

LOADS = {1: 'u8', 2: 'u16', 4: 'u32', 8: 'u64'}


class Gen:
    def __init__(self, schema, header_name):
        self.s = schema
        self.p = schema.prefix
        self.P = schema.prefix.upper()
        self.header_name = header_name
        self.out = []

    def w(self, *lines):
        self.out.extend(lines)

    # ---- helpers ---------------------------------------------------------------------------

    def load_expr(self, prim, ptr):
        size = PRIMS[prim][1]
        ctype = PRIMS[prim][0]
        if prim == 'char':
            return '(char)(*(const uint8_t *)(%s))' % ptr
        if prim in ('uint8', 'int8'):
            return '(%s)(*(const uint8_t *)(%s))' % (ctype, ptr) if prim == 'uint8' else \
                '%s_load_i8(%s)' % (self.p, ptr)
        if prim == 'float':
            return '%s_load_f32(%s)' % (self.p, ptr)
        if prim == 'double':
            return '%s_load_f64(%s)' % (self.p, ptr)
        bits = size * 8
        if prim.startswith('u'):
            return '%s_load_u%d(%s)' % (self.p, bits, ptr)
        return '%s_load_i%d(%s)' % (self.p, bits, ptr)

    def store_stmt(self, prim, ptr, val):
        size = PRIMS[prim][1]
        if prim in ('char', 'uint8', 'int8'):
            return '*(uint8_t *)(%s) = (uint8_t)(%s);' % (ptr, val)
        if prim == 'float':
            return '%s_store_f32(%s, %s);' % (self.p, ptr, val)
        if prim == 'double':
            return '%s_store_f64(%s, %s);' % (self.p, ptr, val)
        bits = size * 8
        return '%s_store_u%d(%s, (uint%d_t)(%s));' % (self.p, bits, ptr, bits, val)

    def null_of(self, t):
        return c_literal(t.prim, t.null)

    # ---- top --------------------------------------------------------------------------------

    def generate(self):
        s = self.s
        guard = re.sub(r'[^A-Z0-9]', '_', self.header_name.upper())
        self.w('/* Generated by codecs/sbe/sbe_c_gen.py from the SBE schema package "%s" '
               '(id %d, version %d, %s). Do not edit. */' %
               (s.package, s.id, s.version, 'big-endian' if s.big_endian else 'little-endian'))
        self.api_comment()
        self.w('#ifndef %s' % guard, '#define %s' % guard, '',
               '#include <errno.h>', '#include <float.h>', '#include <inttypes.h>',
               '#include <math.h>', '#include <stddef.h>', '#include <stdint.h>',
               '#include <stdio.h>', '#include <string.h>', '')
        P = self.P
        self.w('#define %s_SCHEMA_ID %d' % (P, s.id),
               '#define %s_SCHEMA_VERSION %d' % (P, s.version),
               '#define %s_SCHEMA_BIG_ENDIAN %d' % (P, 1 if s.big_endian else 0),
               '#define %s_MESSAGE_HEADER_ENCODED_LENGTH %d' % (P, s.header.size), '')
        self.byte_order()
        self.json_writer()
        for t in s.order:
            self.type_defs(t)
        for m in s.messages:
            self.message(m)
        self.dispatch()
        self.w('', '#endif /* %s */' % guard, '')
        return '\n'.join(self.out)

    def api_comment(self):
        p, P = self.p, self.P
        self.w('/*',
               ' * Generated API (prefix "%s_", from the schema package):' % p,
               ' *',
               ' * Decoding (flyweight, reads in place, never out of bounds):',
               ' *   struct %s_<msg> m;' % p,
               ' *   %s_<msg>_wrap_for_decode(&m, body, len, acting_block_length, acting_version)' % p,
               ' *       body points after the message header; checks once that len covers the acting',
               ' *       block and that the block holds every field of the message\'s base version.',
               ' *       0, or -EBADMSG. Field accessors then are plain loads:',
               ' *   %s_<msg>_<field>(&m)            primitive/enum (raw encoding)/set (raw bits)' % p,
               ' *   %s_<msg>_<field>_<member>(&m)   composite members, flattened (e.g. price mantissa)' % p,
               ' *   %s_<msg>_<chararray>(&m)        const char * into the buffer, <..>_LENGTH bytes' % p,
               ' *   %s_<msg>_<array>(&m, i)         element i of a non-char array' % p,
               ' *   Fields added after the acting version (sinceVersion) read as the null value.',
               ' *   Groups, in schema order (fixed-size groups are checked whole by wrap and may',
               ' *   be left unvisited; others check each entry against the remaining length):',
               ' *     struct %s_<msg>_<group> g;' % p,
               ' *     %s_<msg>_<group>_wrap_for_decode(&m, &g);  0 or -EBADMSG; g.count entries' % p,
               ' *     while (g.index < g.count) { if (%s_<msg>_<group>_next(&g) < 0) error; ' % p +
               '%s_<msg>_<group>_<field>(&g) }' % p,
               ' *     nested groups wrap with the parent group entry; var data after the groups:',
               ' *   %s_<msg>_get_<data>(&m, &ptr, &len)  0 or -EBADMSG (length checked)' % p,
               ' *   %s_<msg>_encoded_length(&m)      bytes after the header consumed so far' % p,
               ' * Encoding:',
               ' *   %s_<msg>_wrap_and_apply_header(&m, buf, cap)  writes the header; 0 or -ENOSPC' % p,
               ' *   %s_<msg>_wrap_for_encode(&m, body, cap)       no header (zeroes the block)' % p,
               ' *   %s_<msg>_set_<field>(&m, v), %s_<msg>_set_<chararray>(&m, s, n)' % (p, p),
               ' *   %s_<msg>_<group>_wrap_for_encode(&m, &g, count), then _next(&g) + setters' % p,
               ' *   %s_<msg>_put_<data>(&m, ptr, len)   0, -ENOSPC or -EINVAL (too long)' % p,
               ' * JSON (snprintf-style: returns the length needed, writes at most cap bytes + NUL):',
               ' *   %s_<msg>_print_json(body, len, acting_block_length, acting_version, out, cap)' % p,
               ' *   %s_message_print_json(template_id, body, len, acting_block_length, version, out,' % p,
               ' *       cap)  any message by template id; -ENOENT for an unknown template',
               ' *   %s_message_name(template_id)   schema name of a template or NULL' % p,
               ' * Types: %s_<enum>_name(v) -> value name or NULL; %s_<ENUM>_<VALUE> constants;' % (p, P),
               ' *   %s_<SET>_<CHOICE> bit masks; %s_<TYPE>_NULL_VALUE/_MIN_VALUE/_MAX_VALUE;' % (P, P),
               ' *   composite accessors %s_<composite>_<member>(const uint8_t *p) (e.g. the header);' % p,
               ' *   %s_<MSG>_TEMPLATE_ID/_BLOCK_LENGTH, %s_<MSG>_<FIELD>_OFFSET, ' % (P, P) +
               '%s_<MSG>_<GROUP>_BLOCK_LENGTH.' % P,
               ' */', '')

    def byte_order(self):
        p = self.p
        big = self.s.big_endian
        self.w('/* Loads and stores: memcpy (one move once inlined) plus a byte swap when the schema\'s',
               ' * byte order is not the host\'s (checked at compile time). */',
               '#if !defined(__BYTE_ORDER__) || !defined(__ORDER_LITTLE_ENDIAN__)',
               '#error "compiler does not define __BYTE_ORDER__"',
               '#endif',
               '#if __BYTE_ORDER__ == %s' % ('__ORDER_BIG_ENDIAN__' if big else '__ORDER_LITTLE_ENDIAN__'),
               '#define %s_SWAP16(v) (v)' % p.upper(),
               '#define %s_SWAP32(v) (v)' % p.upper(),
               '#define %s_SWAP64(v) (v)' % p.upper(),
               '#else',
               '#define %s_SWAP16(v) __builtin_bswap16(v)' % p.upper(),
               '#define %s_SWAP32(v) __builtin_bswap32(v)' % p.upper(),
               '#define %s_SWAP64(v) __builtin_bswap64(v)' % p.upper(),
               '#endif', '')
        for bits in (16, 32, 64):
            self.w('static inline uint%d_t %s_load_u%d(const void *p)' % (bits, p, bits), '{',
                   '    uint%d_t v;' % bits, '    memcpy(&v, p, sizeof(v));',
                   '    return %s_SWAP%d(v);' % (p.upper(), bits), '}', '',
                   'static inline void %s_store_u%d(void *p, uint%d_t v)' % (p, bits, bits), '{',
                   '    v = %s_SWAP%d(v);' % (p.upper(), bits), '    memcpy(p, &v, sizeof(v));', '}', '')
        for bits in (8, 16, 32, 64):
            src = '*(const uint8_t *)p' if bits == 8 else '%s_load_u%d(p)' % (p, bits)
            self.w('static inline int%d_t %s_load_i%d(const void *p)' % (bits, p, bits), '{',
                   '    uint%d_t u = %s;' % (bits, src), '    int%d_t v;' % bits,
                   '    memcpy(&v, &u, sizeof(v));', '    return v;', '}', '')
        for ft, bits in (('float', 32), ('double', 64)):
            short = 'f32' if bits == 32 else 'f64'
            self.w('static inline %s %s_load_%s(const void *p)' % (ft, p, short), '{',
                   '    uint%d_t u = %s_load_u%d(p);' % (bits, p, bits), '    %s v;' % ft,
                   '    memcpy(&v, &u, sizeof(v));', '    return v;', '}', '',
                   'static inline void %s_store_%s(void *p, %s v)' % (p, short, ft), '{',
                   '    uint%d_t u;' % bits, '    memcpy(&u, &v, sizeof(u));',
                   '    %s_store_u%d(p, u);' % (p, bits), '}', '')
        self.w('/* Zero bytes returned for char arrays absent in the acting version. */',
               'static const char %s_null_chars[%d];' % (p, max(self.max_char_len(), 1)), '')

    def max_char_len(self):
        n = 1
        for t in self.s.order:
            if t.kind == 'prim':
                n = max(n, t.length)
            if t.kind == 'composite':
                for m in t.members:
                    if m.type.kind == 'prim':
                        n = max(n, m.type.length)
        return n

    def json_writer(self):
        p = self.p
        self.w('/* JSON writer over a caller buffer: counts every byte, stores what fits. */',
               'struct %s_json {' % p, '    char *out;', '    size_t cap;', '    size_t len;', '};', '',
               'static inline void %s_json_raw(struct %s_json *w, const char *s, size_t n)' % (p, p),
               '{',
               '    if (w->len < w->cap) {',
               '        size_t room = w->cap - w->len;',
               '        memcpy(w->out + w->len, s, n < room ? n : room);',
               '    }',
               '    w->len += n;',
               '}', '',
               'static inline void %s_json_i64(struct %s_json *w, int64_t v)' % (p, p), '{',
               '    char tmp[24];',
               '    int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);',
               '    %s_json_raw(w, tmp, (size_t)n);' % p, '}', '',
               'static inline void %s_json_u64(struct %s_json *w, uint64_t v)' % (p, p), '{',
               '    char tmp[24];',
               '    int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);',
               '    %s_json_raw(w, tmp, (size_t)n);' % p, '}', '',
               'static inline void %s_json_f64(struct %s_json *w, double v, int digits)' % (p, p), '{',
               '    char tmp[40];',
               '    if (isnan(v) || isinf(v)) {',
               '        %s_json_raw(w, "null", 4);' % p,
               '        return;',
               '    }',
               '    int n = snprintf(tmp, sizeof(tmp), "%.*g", digits, v);',
               '    %s_json_raw(w, tmp, (size_t)n);' % p, '}', '',
               '/* A JSON string of the bytes up to the first NUL, trailing spaces trimmed when asked;',
               ' * quotes, backslashes, control and non-ASCII bytes escaped. */',
               'static inline void %s_json_str(struct %s_json *w, const char *s, size_t n, int trim)' %
               (p, p), '{',
               '    const char *nul = memchr(s, 0, n);',
               '    if (nul != NULL)',
               '        n = (size_t)(nul - s);',
               '    while (trim && n > 0 && s[n - 1] == \' \')',
               '        n--;',
               '    %s_json_raw(w, "\\"", 1);' % p,
               '    for (size_t i = 0; i < n; i++) {',
               '        unsigned char c = (unsigned char)s[i];',
               '        if (c == \'"\' || c == \'\\\\\') {',
               '            char esc[2] = {\'\\\\\', (char)c};',
               '            %s_json_raw(w, esc, 2);' % p,
               '        } else if (c < 0x20 || c >= 0x7f) {',
               '            char esc[8];',
               '            snprintf(esc, sizeof(esc), "\\\\u%04x", c);',
               '            %s_json_raw(w, esc, 6);' % p,
               '        } else {',
               '            %s_json_raw(w, (const char *)&s[i], 1);' % p,
               '        }',
               '    }',
               '    %s_json_raw(w, "\\"", 1);' % p, '}', '',
               '/* NUL-terminates what fits and returns the full length (snprintf contract). */',
               'static inline int %s_json_finish(struct %s_json *w)' % (p, p), '{',
               '    if (w->cap > 0)',
               '        w->out[w->len < w->cap ? w->len : w->cap - 1] = \'\\0\';',
               '    return w->len > INT32_MAX ? -EOVERFLOW : (int)w->len;', '}', '')

    # ---- types ------------------------------------------------------------------------------

    def type_defs(self, t):
        p, P = self.p, self.P
        N = '%s_%s' % (P, upper(t.name))
        n = '%s_%s' % (p, snake(t.name))
        if t.kind == 'prim':
            self.w('/* type %s: %s%s%s */' % (t.name, t.prim, '[%d]' % t.length if t.length > 1 else '',
                                                ', ' + t.presence if t.presence != 'required' else ''))
            if t.presence == 'constant':
                if isinstance(t.const, str):
                    self.w('#define %s_VALUE "%s"' % (N, t.const))
                else:
                    self.w('#define %s_VALUE %s' % (N, c_literal(t.prim, t.const)))
            else:
                self.w('#define %s_NULL_VALUE %s' % (N, c_literal(t.prim, t.null)),
                       '#define %s_MIN_VALUE %s' % (N, c_literal(t.prim, t.min)),
                       '#define %s_MAX_VALUE %s' % (N, c_literal(t.prim, t.max)))
            if t.length > 1:
                self.w('#define %s_LENGTH %d' % (N, t.length))
            self.w('')
        elif t.kind == 'enum':
            ct = t.encoding.ctype
            self.w('/* enum %s (encoding %s) */' % (t.name, t.encoding.name), 'enum %s {' % n)
            for vn, vv in t.values:
                self.w('    %s_%s = %d,' % (N, upper(vn), vv))
            self.w('};', '#define %s_NULL_VALUE %s' % (N, self.null_of(t.encoding)), '',
                   'static inline const char *%s_name(%s v)' % (n, ct), '{', '    switch (v) {')
            for vn, vv in t.values:
                self.w('    case %s:' % c_literal(t.encoding.prim, vv), '        return "%s";' % vn)
            self.w('    default:', '        return NULL;', '    }', '}', '')
        elif t.kind == 'set':
            ct = t.encoding.ctype
            bits = t.encoding.size * 8
            self.w('/* set %s (encoding %s): bit masks */' % (t.name, t.encoding.name))
            for cn, bit in t.choices:
                self.w('#define %s_%s (UINT%d_C(1) << %d)' % (N, upper(cn), max(bits, 32), bit))
            self.w('', 'static inline void %s_print_json(struct %s_json *w, %s v)' % (n, p, ct), '{',
                   '    int first = 1;', '    %s_json_raw(w, "[", 1);' % p)
            for cn, bit in t.choices:
                self.w('    if (v & %s_%s) {' % (N, upper(cn)),
                       '        if (!first)', '            %s_json_raw(w, ",", 1);' % p,
                       '        %s_json_raw(w, "\\"%s\\"", %d);' % (p, cn, len(cn) + 2),
                       '        first = 0;', '    }')
            self.w('    (void)first;', '    %s_json_raw(w, "]", 1);' % p, '}', '')
        else:
            self.w('/* composite %s: %d bytes */' % (t.name, t.size),
                   '#define %s_ENCODED_LENGTH %d' % (N, t.size))
            for lf in leaves_of(t, [], 0):
                self.w('#define %s_%s_OFFSET %d' % (N, lf.suffix.upper(), lf.offset))
            self.w('')
            self.accessors(n, 'const uint8_t *p', 'uint8_t *p', 'p', None,
                           [(None, leaves_of(t, [], 0))])

    # ---- accessors --------------------------------------------------------------------------

    def accessors(self, fn, self_c, self_m, base, version_of, fields):
        """Getters and setters of every leaf. fields: [(Field or None, leaves)].
        version_of(field) returns the presence condition for versioned fields or None."""
        for f, leaves in fields:
            cond = version_of(f) if version_of and f is not None else None
            for lf in leaves:
                self.leaf_accessor(fn, self_c, self_m, base, cond, lf)

    def leaf_accessor(self, fn, self_c, self_m, base, cond, lf):
        t = lf.t
        name = '%s_%s' % (fn, lf.suffix)
        set_name = '%s_set_%s' % (fn, lf.suffix)
        ptr = '%s + %d' % (base, lf.offset)
        unused = '    (void)%s;' % base.split('->')[0]
        if lf.const is not None:
            if isinstance(lf.const, str):
                self.w('static inline const char *%s(%s)' % (name, self_c), '{', unused,
                       '    return "%s";' % lf.const, '}', '')
            else:
                self.w('static inline %s %s(%s)' % (t.ctype, name, self_c), '{', unused,
                       '    return %s;' % c_literal(t.prim, lf.const), '}', '')
            return
        guard = []
        if t.length > 1 and t.prim == 'char':
            if cond:
                guard = ['    if (!(%s))' % cond, '        return %s_null_chars;' % self.p]
            self.w('#define %s_LENGTH %d' % (name.upper(), t.length),
                   'static inline const char *%s(%s)' % (name, self_c), '{', *guard,
                   '    return (const char *)(%s);' % ptr, '}', '',
                   '/* Copies min(n, %d) bytes of s, NUL-pads the rest. */' % t.length,
                   'static inline void %s(%s, const char *s, size_t n)' % (set_name, self_m), '{',
                   '    if (n > %d)' % t.length, '        n = %d;' % t.length,
                   '    memcpy(%s, s, n);' % ptr, '    memset(%s + n, 0, %d - n);' % (ptr, t.length),
                   '}', '')
            return
        if t.length > 1:
            size = PRIMS[t.prim][1]
            if cond:
                guard = ['    if (!(%s))' % cond, '        return %s;' % self.null_of(t)]
            self.w('#define %s_LENGTH %d' % (name.upper(), t.length),
                   'static inline %s %s(%s, size_t i)' % (t.ctype, name, self_c), '{', *guard,
                   '    if (i >= %d)' % t.length, '        return %s;' % self.null_of(t),
                   '    return %s;' % self.load_expr(t.prim, '%s + i * %d' % (ptr, size)), '}', '',
                   'static inline int %s(%s, size_t i, %s v)' % (set_name, self_m, t.ctype), '{',
                   '    if (i >= %d)' % t.length, '        return -ERANGE;',
                   '    ' + self.store_stmt(t.prim, '%s + i * %d' % (ptr, size), 'v'),
                   '    return 0;', '}', '')
            return
        if cond:
            guard = ['    if (!(%s))' % cond, '        return %s;' % self.null_of(t)]
        self.w('static inline %s %s(%s)' % (t.ctype, name, self_c), '{', *guard,
               '    return %s;' % self.load_expr(t.prim, ptr), '}', '',
               'static inline void %s(%s, %s v)' % (set_name, self_m, t.ctype), '{',
               '    ' + self.store_stmt(t.prim, ptr, 'v'), '}', '')

    # ---- messages and groups ----------------------------------------------------------------

    def message(self, m):
        p, P = self.p, self.P
        n = '%s_%s' % (p, m.path)
        N = n.upper()
        self.w('/* ---- message %s (template %d, block %d bytes, since version %d) ---- */' %
               (m.name, m.id, m.block_length, m.since),
               '#define %s_TEMPLATE_ID %d' % (N, m.id),
               '#define %s_BLOCK_LENGTH %d' % (N, m.block_length),
               '#define %s_SINCE_VERSION %d' % (N, m.since))
        self.offsets(N, m)
        self.w('', 'struct %s {' % n,
               '    uint8_t *buf;          /* start of the root block */',
               '    size_t len;            /* bytes available from buf */',
               '    size_t pos;            /* end of what has been read/written so far */',
               '    uint8_t *block;        /* the root block (== buf) */',
               '    uint16_t block_length; /* acting block length */',
               '    uint16_t version;      /* acting schema version */',
               '};', '')
        lines = ['static inline int %s_wrap_for_decode(struct %s *m, const void *buf, size_t len,' % (n, n),
               '                                     uint16_t acting_block_length, uint16_t acting_version)',
               '{',
               '    m->buf = (uint8_t *)(uintptr_t)buf;',
               '    m->block = m->buf;',
               '    m->version = acting_version;',
               '    if (acting_block_length > len%s) {' % (
                   ' || acting_block_length < %d' % m.base_length() if m.base_length() else ''),
               '        m->len = m->pos = m->block_length = 0; /* nothing readable */',
               '        return -EBADMSG;',
               '    }',
               '    m->len = len;',
               '    m->pos = acting_block_length;',
               '    m->block_length = acting_block_length;',
               '    return 0;', '}', '',
               'static inline int %s_wrap_for_encode(struct %s *m, void *buf, size_t cap)' % (n, n), '{',
               '    m->buf = buf;', '    m->block = m->buf;',
               '    m->block_length = %d;' % m.block_length,
               '    m->version = %d;' % self.s.version]
        if m.block_length:
            lines += ['    if (cap < %d) {' % m.block_length,
                      '        m->len = m->pos = 0; /* nothing writable */',
                      '        return -ENOSPC;', '    }']
        lines += ['    m->len = cap;', '    m->pos = %d;' % m.block_length,
               '    memset(m->buf, 0, %d);' % m.block_length, '    return 0;', '}', '',
               '/* Writes the message header at buf, then wraps the body after it. */',
               'static inline int %s_wrap_and_apply_header(struct %s *m, void *buf, size_t cap)' % (n, n),
               '{',
               '    uint8_t *h = buf;',
               '    if (cap < %s_MESSAGE_HEADER_ENCODED_LENGTH + %d) {' % (P, m.block_length),
               '        (void)%s_wrap_for_encode(m, buf, 0); /* leaves m empty */' % n,
               '        return -ENOSPC;', '    }',
               '    memset(h, 0, %s_MESSAGE_HEADER_ENCODED_LENGTH);' % P]
        self.w(*lines)
        hdr = '%s_%s' % (p, snake(self.s.header.name))
        self.w('    %s_set_block_length(h, %d);' % (hdr, m.block_length),
               '    %s_set_template_id(h, %d);' % (hdr, m.id),
               '    %s_set_schema_id(h, %d);' % (hdr, self.s.id),
               '    %s_set_version(h, %d);' % (hdr, self.s.version),
               '    return %s_wrap_for_encode(m, h + %s_MESSAGE_HEADER_ENCODED_LENGTH,' % (n, P),
               '                                cap - %s_MESSAGE_HEADER_ENCODED_LENGTH);' % P, '}', '',
               '/* Bytes after the header read or written so far (the whole message once every group',
               ' * and var data has been visited). */',
               'static inline size_t %s_encoded_length(const struct %s *m)' % (n, n), '{',
               '    return m->pos;', '}', '')
        self.block_body(m, n, '&m->pos', 'm')
        self.print_message(m, n)

    def offsets(self, N, blk):
        for f in blk.fields:
            self.w('#define %s_%s_OFFSET %d' % (N, upper(f.name), f.offset))
            self.w('#define %s_%s_SINCE_VERSION %d' % (N, upper(f.name), f.since))
        for g in blk.groups:
            G = '%s_%s' % (N, upper(g.name))
            self.w('#define %s_BLOCK_LENGTH %d' % (G, g.block_length),
                   '#define %s_SINCE_VERSION %d' % (G, g.since))
            self.offsets(G, g)

    def version_cond(self, blk, var):
        def cond(f):
            if f.size == 0 or f.since <= blk.since:
                return None
            return '%s->version >= %d && %s->block_length >= %d' % (var, f.since, var, f.offset + f.size)
        return cond

    def block_body(self, blk, n, pos_expr, var):
        """Field accessors, groups and var data of a message or group named n."""
        selfc = 'const struct %s *%s' % (n, var)
        selfm = 'struct %s *%s' % (n, var)
        self.accessors(n, selfc, selfm, '%s->block' % var, self.version_cond(blk, var),
                       [(f, field_leaves(f)) for f in blk.fields])
        for g in blk.groups:
            self.group(g, blk, n, var)
        for d in blk.datas:
            self.data(d, blk, n, pos_expr, var)

    def group(self, g, parent, pn, pvar):
        p = self.p
        n = '%s_%s' % (p, g.path)
        dim = g.dimension
        dn = '%s_%s' % (p, snake(dim.name))
        bl = dim.member('blockLength').type
        ng = dim.member('numInGroup').type
        max_count = ng.max
        parent_pos = 'parent->pos' if parent.is_group else '&parent->pos'
        # Entries of a fixed size (no nested group, no var data) are checked all at once when the
        # group is wrapped, so next() is a pointer step and the group can be skipped unvisited.
        fixed = not g.groups and not g.datas
        self.w('/* group %s: entries of %d bytes (dimension %s, %d bytes)%s */' %
               (g.name, g.block_length, dim.name, dim.size,
                ', fixed size: the whole group is checked by wrap' if fixed else ''),
               'struct %s {' % n,
               '    uint8_t *buf;',
               '    size_t len;',
               '    size_t *pos;           /* the message\'s cursor, shared by every group */',
               '    uint8_t *block;        /* current entry */',
               '    uint8_t *entries;      /* entry 0 */',
               '    uint16_t block_length; /* acting entry length */',
               '    uint16_t version;',
               '    uint32_t count;',
               '    uint32_t index;        /* entries visited so far */',
               '    int short_error;       /* -EBADMSG when decoding, -ENOSPC when encoding */',
               '};', '',
               'static inline int %s_wrap_for_decode(struct %s *parent, struct %s *g)' % (n, pn, n),
               '{',
               '    g->buf = parent->buf;', '    g->len = parent->len;',
               '    g->pos = %s;' % parent_pos,
               '    g->version = parent->version;', '    g->index = 0;',
               '    g->block = g->entries = g->buf + *g->pos;', '    g->short_error = -EBADMSG;',
               '    g->count = 0; /* a refused group is empty */', '    g->block_length = 0;')
        if g.since > g.parent.since:
            self.w('    if (parent->version < %d)' % g.since, '        return 0;')
        self.w('    if (g->len < %d || *g->pos > g->len - %d)' % (dim.size, dim.size),
               '        return -EBADMSG;',
               '    const uint8_t *d = g->buf + *g->pos;',
               '    uint16_t block_length = (uint16_t)%s_block_length(d);' % dn,
               '    uint32_t count = (uint32_t)%s_num_in_group(d);' % dn)
        if g.base_length():
            self.w('    if (block_length < %d)' % g.base_length(), '        return -EBADMSG;')
        self.w('    *g->pos += %d;' % dim.size)
        if fixed:
            self.w('    size_t bytes = (size_t)count * block_length;',
                   '    if (bytes > g->len - *g->pos)', '        return -EBADMSG;',
                   '    g->entries = g->buf + *g->pos;', '    *g->pos += bytes;')
        self.w('    g->block_length = block_length;', '    g->count = count;',
               '    return 0;', '}', '')
        self.w('/* count must not exceed %s. */' % max_count,
               'static inline int %s_wrap_for_encode(struct %s *parent, struct %s *g, uint32_t count)' %
               (n, pn, n), '{',
               '    g->buf = parent->buf;', '    g->len = parent->len;',
               '    g->pos = %s;' % parent_pos,
               '    g->version = parent->version;', '    g->index = 0;',
               '    g->block = g->entries = g->buf + *g->pos;',
               '    g->short_error = -ENOSPC;',
               '    g->block_length = %d;' % g.block_length,
               '    g->count = 0;',
               '    if (count > %s)' % c_literal(ng.prim, max_count), '        return -EINVAL;',
               '    if (g->len < %d || *g->pos > g->len - %d)' % (dim.size, dim.size),
               '        return -ENOSPC;')
        if fixed:
            self.w('    size_t bytes = (size_t)count * %d;' % g.block_length,
                   '    if (bytes > g->len - *g->pos - %d)' % dim.size, '        return -ENOSPC;')
        self.w('    uint8_t *d = g->buf + *g->pos;',
               '    memset(d, 0, %d);' % dim.size,
               '    %s_set_block_length(d, (%s)%d);' % (dn, bl.ctype, g.block_length),
               '    %s_set_num_in_group(d, (%s)count);' % (dn, ng.ctype),
               '    *g->pos += %d;' % dim.size)
        if fixed:
            self.w('    g->entries = g->buf + *g->pos;', '    memset(g->entries, 0, bytes);',
                   '    *g->pos += bytes;')
        self.w('    g->count = count;', '    return 0;', '}', '')
        if fixed:
            self.w('/* Moves to the next entry (already checked by wrap). */',
                   'static inline int %s_next(struct %s *g)' % (n, n), '{',
                   '    if (g->index >= g->count)', '        return -ERANGE;',
                   '    g->block = g->entries + (size_t)g->index * g->block_length;',
                   '    g->index++;', '    return 0;', '}', '')
        else:
            self.w('/* Moves to the next entry: checks it against the remaining length. */',
                   'static inline int %s_next(struct %s *g)' % (n, n), '{',
                   '    if (g->index >= g->count)', '        return -ERANGE;',
                   '    if (*g->pos > g->len || g->len - *g->pos < g->block_length)',
                   '        return g->short_error;',
                   '    g->block = g->buf + *g->pos;',
                   '    if (g->short_error == -ENOSPC)',
                   '        memset(g->block, 0, g->block_length);',
                   '    *g->pos += g->block_length;',
                   '    g->index++;',
                   '    return 0;', '}', '')
        self.block_body(g, n, 'g->pos', 'g')

    def data(self, d, blk, n, pos_expr, var):
        p = self.p
        lt = d.length.type
        lsize = lt.size
        sname = snake(d.name)
        maxv = lt.max if lt.max is not None else PRIMS[lt.prim][4]
        pos = pos_expr if pos_expr.startswith('&') is False else pos_expr
        posv = '(*%s)' % pos if not pos.startswith('&') else pos[1:]
        self.w('/* var data %s: %s length prefix */' % (d.name, lt.prim),
               'static inline int %s_get_%s(struct %s *%s, const uint8_t **data, uint32_t *length)' %
               (n, sname, n, var), '{')
        if d.since > blk.since:
            self.w('    if (%s->version < %d) {' % (var, d.since), '        *data = NULL;',
                   '        *length = 0;', '        return 0;', '    }')
        self.w('    if (%s->len < %d || %s > %s->len - %d)' % (var, lsize, posv, var, lsize),
               '        return -EBADMSG;',
               '    uint32_t n = (uint32_t)%s;' % self.load_expr(lt.prim, '%s->buf + %s' % (var, posv)),
               '    if (n > %s->len - %s - %d)' % (var, posv, lsize), '        return -EBADMSG;',
               '    *data = %s->buf + %s + %d;' % (var, posv, lsize), '    *length = n;',
               '    %s += %d + (size_t)n;' % (posv, lsize), '    return 0;', '}', '',
               'static inline int %s_put_%s(struct %s *%s, const void *data, uint32_t length)' %
               (n, sname, n, var), '{',
               '    if ((uint64_t)length > %s)' % c_literal('uint64', maxv), '        return -EINVAL;',
               '    if (%s > %s->len || %s->len - %s < %d + (size_t)length)' % (posv, var, var, posv, lsize),
               '        return -ENOSPC;',
               '    %s' % self.store_stmt(lt.prim, '%s->buf + %s' % (var, posv), 'length'),
               '    if (length > 0)',
               '        memcpy(%s->buf + %s + %d, data, length);' % (var, posv, lsize),
               '    %s += %d + (size_t)length;' % (posv, lsize), '    return 0;', '}', '')

    # ---- JSON printers ----------------------------------------------------------------------

    def print_leaf(self, fn, var, lf, lines, indent):
        """Lines printing the value of one leaf (key already written)."""
        p = self.p
        t = lf.t
        acc = '%s_%s(%s)' % (fn, lf.suffix, var)
        sp = ' ' * indent
        if lf.const is not None:
            if isinstance(lf.const, str):
                lines.append(sp + '%s_json_str(w, "%s", %d, 0);' % (p, lf.const, len(lf.const)))
            elif lf.enum is not None:
                name = [vn for vn, vv in lf.enum.values if vv == lf.const][0]
                lines.append(sp + '%s_json_raw(w, "\\"%s\\"", %d);' % (p, name, len(name) + 2))
            elif t.prim == 'char':
                ch = chr(lf.const)
                lit = '\\"' + ('\\\\' + ch if ch in '"\\' else ch) + '\\"'
                lines.append(sp + '%s_json_raw(w, "%s", %d);' % (p, lit, 3 if ch not in '"\\' else 4))
            elif t.prim in ('float', 'double'):
                lines.append(sp + '%s_json_f64(w, %s, 17);' % (p, acc))
            elif t.prim.startswith('u'):
                lines.append(sp + '%s_json_u64(w, %s);' % (p, acc))
            else:
                lines.append(sp + '%s_json_i64(w, %s);' % (p, acc))
            return
        if t.length > 1 and t.prim == 'char':
            lines.append(sp + '%s_json_str(w, %s, %d, 1);' % (p, acc, t.length))
            return
        if t.length > 1:
            lines.append(sp + '%s_json_raw(w, "[", 1);' % p)
            lines.append(sp + 'for (size_t i = 0; i < %d; i++) {' % t.length)
            lines.append(sp + '    if (i > 0)')
            lines.append(sp + '        %s_json_raw(w, ",", 1);' % p)
            one = '%s_%s(%s, i)' % (fn, lf.suffix, var)
            self.print_scalar(t, one, lines, indent + 4, False)
            lines.append(sp + '}')
            lines.append(sp + '%s_json_raw(w, "]", 1);' % p)
            return
        if lf.set is not None:
            lines.append(sp + '%s_%s_print_json(w, %s);' % (p, snake(lf.set.name), acc))
            return
        if lf.enum is not None:
            lines.append(sp + '{')
            lines.append(sp + '    %s v = %s;' % (t.ctype, acc))
            lines.append(sp + '    const char *name = %s_%s_name(v);' % (p, snake(lf.enum.name)))
            lines.append(sp + '    if (name != NULL) {')
            lines.append(sp + '        %s_json_raw(w, "\\"", 1);' % p)
            lines.append(sp + '        %s_json_raw(w, name, strlen(name));' % p)
            lines.append(sp + '        %s_json_raw(w, "\\"", 1);' % p)
            lines.append(sp + '    } else if (v == %s) {' % self.null_of(t))
            lines.append(sp + '        %s_json_raw(w, "null", 4);' % p)
            lines.append(sp + '    } else {')
            lines.append(sp + '        %s_json_i64(w, (int64_t)v);' % p)
            lines.append(sp + '    }')
            lines.append(sp + '}')
            return
        lines.append(sp + '{')
        lines.append(sp + '    %s v = %s;' % (t.ctype, acc))
        self.print_scalar(t, 'v', lines, indent + 4, lf.presence == 'optional')
        lines.append(sp + '}')

    def print_scalar(self, t, expr, lines, indent, optional):
        p = self.p
        sp = ' ' * indent
        if t.prim in ('float', 'double'):
            lines.append(sp + '%s_json_f64(w, %s, %d);' % (p, expr, 9 if t.prim == 'float' else 17))
            return
        if t.prim == 'char':
            lines.append(sp + '{')
            lines.append(sp + '    char c = %s;' % expr)
            lines.append(sp + '    if (c == 0)')
            lines.append(sp + '        %s_json_raw(w, "null", 4);' % p)
            lines.append(sp + '    else')
            lines.append(sp + '        %s_json_str(w, &c, 1, 0);' % p)
            lines.append(sp + '}')
            return
        fmt = 'u64' if t.prim.startswith('u') else 'i64'
        cast = 'uint64_t' if fmt == 'u64' else 'int64_t'
        if optional:
            lines.append(sp + 'if (%s == %s)' % (expr, self.null_of(t)))
            lines.append(sp + '    %s_json_raw(w, "null", 4);' % p)
            lines.append(sp + 'else')
            lines.append(sp + '    %s_json_%s(w, (%s)%s);' % (p, fmt, cast, expr))
        else:
            lines.append(sp + '%s_json_%s(w, (%s)%s);' % (p, fmt, cast, expr))

    def print_fields(self, blk, fn, var, lines):
        """Prints '"name":value' for every field, nesting composite members as objects."""
        p = self.p
        first = [True]

        def key(name):
            text = ('' if first[0] else ',') + '"%s":' % name
            first[0] = False
            lines.append('    %s_json_raw(w, "%s", %d);' % (p, text.replace('"', '\\"'), len(text)))

        for f in blk.fields:
            key(f.name)
            leaves = field_leaves(f)
            if f.type.kind != 'composite' or f.const_enum is not None:
                self.print_leaf(fn, var, leaves[0], lines, 4)
                continue
            self.print_composite(f.type, [f.name], fn, var, lines)
        return first[0]

    def print_composite(self, comp, names, fn, var, lines):
        p = self.p
        lines.append('    %s_json_raw(w, "{", 1);' % p)
        for i, m in enumerate(comp.members):
            text = (',' if i else '') + '"%s":' % m.name
            lines.append('    %s_json_raw(w, "%s", %d);' % (p, text.replace('"', '\\"'), len(text)))
            if m.type.kind == 'composite':
                self.print_composite(m.type, names + [m.name], fn, var, lines)
            else:
                lf = leaves_of(m.type, names + [m.name], 0)[0]
                self.print_leaf(fn, var, lf, lines, 4)
        lines.append('    %s_json_raw(w, "}", 1);' % p)

    def print_block_rest(self, blk, fn, var, lines, first):
        """Groups and var data of a block, after its fields."""
        p = self.p
        for g in blk.groups:
            gn = '%s_%s' % (p, g.path)
            text = ('' if first else ',') + '"%s":' % g.name
            first = False
            lines.append('    %s_json_raw(w, "%s", %d);' % (p, text.replace('"', '\\"'), len(text)))
            lines.append('    if (%s_print_json_entries(%s, w) < 0)' % (gn, var))
            lines.append('        return -EBADMSG;')
        for d in blk.datas:
            text = ('' if first else ',') + '"%s":' % d.name
            first = False
            lines.append('    %s_json_raw(w, "%s", %d);' % (p, text.replace('"', '\\"'), len(text)))
            lines.append('    {')
            lines.append('        const uint8_t *data;')
            lines.append('        uint32_t n;')
            lines.append('        if (%s_get_%s(%s, &data, &n) < 0)' % (fn, snake(d.name), var))
            lines.append('            return -EBADMSG;')
            lines.append('        %s_json_str(w, (const char *)data, n, 0);' % p)
            lines.append('    }')

    def print_group_fn(self, g, parent_n):
        """Emits <group>_print_json_entries(parent, w) for g and its nested groups (first)."""
        p = self.p
        n = '%s_%s' % (p, g.path)
        for sub in g.groups:
            self.print_group_fn(sub, n)
        lines = []
        first = self.print_fields(g, n, '&g', lines)
        self.print_block_rest(g, n, '&g', lines, first)
        self.w('static inline int %s_print_json_entries(struct %s *parent, struct %s_json *w)' %
               (n, parent_n, p), '{',
               '    struct %s g;' % n,
               '    if (%s_wrap_for_decode(parent, &g) < 0)' % n, '        return -EBADMSG;',
               '    %s_json_raw(w, "[", 1);' % p,
               '    while (g.index < g.count) {',
               '        if (%s_next(&g) < 0)' % n, '            return -EBADMSG;',
               '        %s_json_raw(w, g.index > 1 ? ",{" : "{", g.index > 1 ? 2 : 1);' % p)
        for line in lines:
            self.w('    ' + line)
        self.w('        %s_json_raw(w, "}", 1);' % p, '    }',
               '    %s_json_raw(w, "]", 1);' % p, '    return 0;', '}', '')

    def print_message(self, m, n):
        p = self.p
        for g in m.groups:
            self.print_group_fn(g, n)
        lines = []
        first = self.print_fields(m, n, '&m', lines)
        self.print_block_rest(m, n, '&m', lines, first)
        self.w('/* Writes the message as one JSON object. Returns the length needed (snprintf',
               ' * contract) or -EBADMSG when the message is truncated or inconsistent. */',
               'static inline int %s_print_json(const void *buf, size_t len, uint16_t acting_block_length,' %
               n,
               '                                uint16_t acting_version, char *out, size_t cap)',
               '{',
               '    struct %s m;' % n,
               '    struct %s_json json = {out, cap, 0};' % p,
               '    struct %s_json *w = &json;' % p,
               '    if (%s_wrap_for_decode(&m, buf, len, acting_block_length, acting_version) < 0)' % n,
               '        return -EBADMSG;',
               '    %s_json_raw(w, "{", 1);' % p)
        for line in lines:
            self.w(line)
        self.w('    %s_json_raw(w, "}", 1);' % p, '    return %s_json_finish(w);' % p, '}', '')

    def dispatch(self):
        p = self.p
        self.w('/* ---- any message, by template id ---- */',
               'static inline const char *%s_message_name(uint16_t template_id)' % p, '{',
               '    switch (template_id) {')
        for m in self.s.messages:
            self.w('    case %d:' % m.id, '        return "%s";' % m.name)
        self.w('    default:', '        return NULL;', '    }', '}', '',
               '/* buf points after the message header; the other arguments come from the header. */',
               'static inline int %s_message_print_json(uint16_t template_id, const void *buf, size_t len,' % p,
               '                                        uint16_t acting_block_length, uint16_t version,',
               '                                        char *out, size_t cap)', '{',
               '    switch (template_id) {')
        for m in self.s.messages:
            self.w('    case %d:' % m.id,
                   '        return %s_%s_print_json(buf, len, acting_block_length, version, out, cap);' %
                   (p, m.path))
        self.w('    default:', '        return -ENOENT;', '    }', '}')


def main(argv):
    if len(argv) == 3:
        schema = Schema(argv[1])
        header_name = argv[2].rsplit('/', 1)[-1]
        text = Gen(schema, header_name).generate()
        with open(argv[2], 'w') as f:
            f.write(text)
        return 0
    if len(argv) == 5 and argv[1] == '--tests':
        import sbe_test_gen
        schema = Schema(argv[2])
        text = sbe_test_gen.TestGen(schema, argv[4]).generate()
        with open(argv[3], 'w') as f:
            f.write(text)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv))
    except (SchemaError, ET.ParseError, OSError) as e:
        sys.stderr.write('sbe_c_gen: %s\n' % e)
        sys.exit(1)
