"""sbe_test_gen.py: writes a cmocka round-trip test for every message of an SBE schema.

Used through `sbe_c_gen.py --tests SCHEMA OUT.c HEADER`. For each message the generated test:
  1. encodes it with the generated setters, every field set to a distinct value derived from a
     hash of its path (some optional fields set to null), groups with several entries, nested
     groups and var data of varied lengths (including empty);
  2. decodes it and asserts that every field, entry and var-data byte reads back as the literal
     value chosen here, and that the decoder consumed exactly the encoded length;
  3. prints it as JSON, parses that with jansson and checks the structure and the root values;
  4. re-decodes every truncation of the message (in an exactly-sized heap copy, so ASan sees any
     read past the end) and asserts each one is rejected;
  5. when a field was added after the message (sinceVersion), decodes with an older acting
     version and asserts that those fields read as null.
The expected values are literals computed here, independently of the generated decoder.
"""

import hashlib

from sbe_c_gen import PRIMS, c_literal, field_leaves, snake


def h(*parts):
    return int.from_bytes(hashlib.sha256('/'.join(str(p) for p in parts).encode()).digest()[:8],
                          'little')


class TestGen:
    def __init__(self, schema, header):
        self.s = schema
        self.p = schema.prefix
        self.header = header
        self.out = []
        self.tmp = 0

    def w(self, *lines):
        self.out.extend(lines)

    def var(self, stem):
        self.tmp += 1
        return '%s%d' % (stem, self.tmp)

    # ---- values ----------------------------------------------------------------------------

    def value(self, lf, seed):
        """Expected value of a leaf: ('null'|'int'|'float'|'chars'|'array', python value)."""
        t = lf.t
        x = h(seed)
        if lf.presence == 'optional' and x % 4 == 0:
            return ('null', t.null)
        if lf.enum is not None:
            vals = [v for _, v in lf.enum.values]
            return ('int', vals[x % len(vals)])
        if lf.set is not None:
            mask = 0
            for i, (_, bit) in enumerate(lf.set.choices):
                if (x >> i) & 1:
                    mask |= 1 << bit
            return ('int', mask or 1 << lf.set.choices[0][1])
        if t.prim in ('float', 'double'):
            return ('float', (x % 100000) / 8.0 - 500)
        if t.prim == 'char':
            if t.length > 1:
                n = 1 + x % t.length
                return ('chars', ''.join(chr(ord('A') + (h(seed, i) % 26)) for i in range(n)))
            return ('int', ord('A') + x % 26)
        lo, hi = int(t.min), int(t.max)
        hi = min(hi, (1 << 62))
        lo = max(lo, -(1 << 62))
        if t.length > 1:
            return ('array', [lo + h(seed, i) % (hi - lo + 1) for i in range(t.length)])
        v = lo + x % (hi - lo + 1)
        if t.presence == 'optional' and v == t.null:
            v = lo
        return ('int', v)

    # ---- encode ----------------------------------------------------------------------------

    def encode_fields(self, blk, fn, var, seed):
        for f in blk.fields:
            for lf in field_leaves(f):
                if lf.const is not None:
                    continue
                kind, v = self.value(lf, (seed, lf.suffix))
                acc = '%s_set_%s' % (fn, lf.suffix)
                t = lf.t
                if kind == 'chars':
                    self.w('    %s(%s, "%s", %d);' % (acc, var, v, len(v)))
                elif kind == 'array':
                    for i, e in enumerate(v):
                        self.w('    assert_int_equal(%s(%s, %d, %s), 0);' % (acc, var, i,
                                                                           c_literal(t.prim, e)))
                elif kind == 'float':
                    self.w('    %s(%s, %s);' % (acc, var, c_literal(t.prim, v)))
                else:
                    self.w('    %s(%s, %s);' % (acc, var, c_literal(t.prim, v)))

    def data_bytes(self, d, seed):
        n = h(seed, d.name) % 40
        if h(seed, d.name, 'empty') % 5 == 0:
            n = 0
        return ''.join(chr(ord('a') + (h(seed, d.name, i) % 26)) for i in range(n))

    def count(self, g, seed):
        return 1 + h(seed, g.name, 'count') % 3

    def encode_block_rest(self, blk, fn, var, seed):
        for g in blk.groups:
            gn = '%s_%s' % (self.p, g.path)
            gv = self.var('g')
            n = self.count(g, seed)
            self.w('    {', '    struct %s %s_s, *%s = &%s_s;' % (gn, gv, gv, gv),
                   '    assert_int_equal(%s_wrap_for_encode(%s, %s, %d), 0);' % (gn, var, gv, n))
            for i in range(n):
                self.w('    assert_int_equal(%s_next(%s), 0);' % (gn, gv))
                self.encode_fields(g, gn, gv, (seed, g.name, i))
                self.encode_block_rest(g, gn, gv, (seed, g.name, i))
            self.w('    assert_int_equal(%s_next(%s), -ERANGE);' % (gn, gv), '    }')
        for d in blk.datas:
            s = self.data_bytes(d, seed)
            self.w('    assert_int_equal(%s_put_%s(%s, "%s", %d), 0);' % (fn, snake(d.name), var, s,
                                                                        len(s)))

    # ---- decode ----------------------------------------------------------------------------

    def check_fields(self, blk, fn, var, seed, nulls_since=None):
        """Asserts every leaf; with nulls_since=V, fields added after V must read as null."""
        for f in blk.fields:
            for lf in field_leaves(f):
                t = lf.t
                acc = '%s_%s' % (fn, lf.suffix)
                if lf.const is not None:
                    if isinstance(lf.const, str):
                        self.w('    assert_string_equal(%s(%s), "%s");' % (acc, var, lf.const))
                    else:
                        self.w('    assert_true(%s(%s) == %s);' % (acc, var, c_literal(t.prim, lf.const)))
                    continue
                absent = nulls_since is not None and f.since > nulls_since and f.since > blk.since
                kind, v = self.value(lf, (seed, lf.suffix))
                if absent:
                    if kind == 'chars':
                        self.w('    assert_int_equal(%s(%s)[0], 0);' % (acc, var))
                    elif kind == 'array':
                        self.w('    assert_true(%s(%s, 0) == %s);' % (acc, var, c_literal(t.prim, t.null)))
                    elif t.prim in ('float', 'double'):
                        self.w('    assert_true(isnan(%s(%s)));' % (acc, var))
                    else:
                        self.w('    assert_true(%s(%s) == %s);' % (acc, var, c_literal(t.prim, t.null)))
                    continue
                if kind == 'chars':
                    padded = v + '\\0' * (t.length - len(v))
                    self.w('    assert_memory_equal(%s(%s), "%s", %d);' % (acc, var, padded, t.length))
                elif kind == 'array':
                    for i, e in enumerate(v):
                        self.w('    assert_true(%s(%s, %d) == %s);' % (acc, var, i, c_literal(t.prim, e)))
                    self.w('    assert_true(%s(%s, %d) == %s);' % (acc, var, t.length,
                                                                c_literal(t.prim, t.null)))
                else:
                    self.w('    assert_true(%s(%s) == %s);' % (acc, var, c_literal(t.prim, v)))

    def check_block_rest(self, blk, fn, var, seed, nulls_since=None):
        for g in blk.groups:
            gn = '%s_%s' % (self.p, g.path)
            gv = self.var('g')
            self.w('    {', '    struct %s %s_s, *%s = &%s_s;' % (gn, gv, gv, gv),
                   '    assert_int_equal(%s_wrap_for_decode(%s, %s), 0);' % (gn, var, gv))
            if nulls_since is not None and g.since > nulls_since and g.since > blk.since:
                self.w('    assert_int_equal(%s->count, 0);' % gv, '    }')
                continue
            n = self.count(g, seed)
            self.w('    assert_int_equal(%s->count, %d);' % (gv, n))
            for i in range(n):
                self.w('    assert_int_equal(%s_next(%s), 0);' % (gn, gv))
                self.check_fields(g, gn, gv, (seed, g.name, i), nulls_since)
                self.check_block_rest(g, gn, gv, (seed, g.name, i), nulls_since)
            self.w('    assert_int_equal(%s_next(%s), -ERANGE);' % (gn, gv), '    }')
        for d in blk.datas:
            dv = self.var('d')
            self.w('    {', '    const uint8_t *%s;' % dv, '    uint32_t %s_len;' % dv,
                   '    assert_int_equal(%s_get_%s(%s, &%s, &%s_len), 0);' % (fn, snake(d.name), var,
                                                                           dv, dv))
            if nulls_since is not None and d.since > nulls_since and d.since > blk.since:
                self.w('    assert_int_equal(%s_len, 0);' % dv, '    }')
                continue
            s = self.data_bytes(d, seed)
            self.w('    assert_int_equal(%s_len, %d);' % (dv, len(s)))
            if s:
                self.w('    assert_memory_equal(%s, "%s", %d);' % (dv, s, len(s)))
            self.w('    }')

    # ---- JSON ------------------------------------------------------------------------------

    def check_json(self, m, fn, seed):
        self.w('    {', '    char json[65536];',
               '    int n = %s_print_json(body, body_len, %s_BLOCK_LENGTH, %s_SCHEMA_VERSION, json, '
               'sizeof(json));' % (fn, fn.upper(), self.p.upper()),
               '    assert_true(n > 0 && (size_t)n < sizeof(json));',
               '    assert_int_equal(strlen(json), (size_t)n);',
               '    char small[8];',
               '    assert_int_equal(%s_print_json(body, body_len, %s_BLOCK_LENGTH, %s_SCHEMA_VERSION,'
               ' small, sizeof(small)), n);' % (fn, fn.upper(), self.p.upper()),
               '    assert_int_equal(strlen(small), n < 7 ? n : 7);',
               '    json_error_t err;',
               '    json_t *root = json_loads(json, 0, &err);',
               '    if (root == NULL)',
               '        fail_msg("JSON does not parse: %s: %s", err.text, json);')
        self.check_json_block(m, 'root', seed)
        self.w('    json_decref(root);', '    }')

    def check_json_block(self, blk, obj, seed):
        """Asserts the JSON object obj holds exactly blk's fields, groups and var data, with the
        values chosen for the encoder (composite members and every group entry included)."""
        self.w('    assert_true(json_is_object(%s));' % obj,
               '    assert_int_equal(json_object_size(%s), %d);' %
               (obj, len(blk.fields) + len(blk.groups) + len(blk.datas)))
        for f in blk.fields:
            for lf in field_leaves(f):
                key = obj
                for name in lf.names:
                    key = 'json_object_get(%s, "%s")' % (key, name)
                self.check_json_leaf(lf, key, seed)
        for g in blk.groups:
            arr = self.var('a')
            n = self.count(g, seed)
            self.w('    json_t *%s = json_object_get(%s, "%s");' % (arr, obj, g.name),
                   '    assert_int_equal(json_array_size(%s), %d);' % (arr, n))
            for i in range(n):
                self.check_json_block(g, 'json_array_get(%s, %d)' % (arr, i), (seed, g.name, i))
        for d in blk.datas:
            s = self.data_bytes(d, seed)
            self.w('    assert_string_equal(json_string_value(json_object_get(%s, "%s")), "%s");' %
                   (obj, d.name, s))

    def check_json_leaf(self, lf, key, seed):
        t = lf.t
        if lf.const is not None:
            if isinstance(lf.const, str):
                self.w('    assert_string_equal(json_string_value(%s), "%s");' % (key, lf.const))
            elif lf.enum is not None:
                name = [vn for vn, vv in lf.enum.values if vv == lf.const][0]
                self.w('    assert_string_equal(json_string_value(%s), "%s");' % (key, name))
            elif t.prim == 'char':
                self.w('    assert_string_equal(json_string_value(%s), "%s");' % (key, chr(lf.const)))
            else:
                self.w('    assert_true(json_number_value(%s) == %r);' % (key, lf.const))
            return
        kind, v = self.value(lf, (seed, lf.suffix))
        if kind == 'null':
            self.w('    assert_true(json_is_null(%s));' % key)
        elif lf.enum is not None:
            name = [vn for vn, vv in lf.enum.values if vv == v][0]
            self.w('    assert_string_equal(json_string_value(%s), "%s");' % (key, name))
        elif lf.set is not None:
            names = [cn for cn, bit in lf.set.choices if v & (1 << bit)]
            self.w('    assert_int_equal(json_array_size(%s), %d);' % (key, len(names)))
            for i, cn in enumerate(names):
                self.w('    assert_string_equal(json_string_value(json_array_get(%s, %d)), "%s");' %
                       (key, i, cn))
        elif kind == 'chars':
            self.w('    assert_string_equal(json_string_value(%s), "%s");' % (key, v))
        elif kind == 'array':
            self.w('    assert_int_equal(json_array_size(%s), %d);' % (key, len(v)))
            for i, e in enumerate(v):
                self.w('    assert_true(json_integer_value(json_array_get(%s, %d)) == %dLL);' %
                       (key, i, e))
        elif kind == 'float':
            self.w('    assert_true(json_number_value(%s) == %r);' % (key, v))
        elif t.prim == 'char':
            self.w('    assert_string_equal(json_string_value(%s), "%s");' % (key, chr(v)))
        else:
            self.w('    assert_true(json_integer_value(%s) == %dLL);' % (key, v))

    # ---- per message -----------------------------------------------------------------------

    def versioned(self, blk):
        out = set()
        for f in blk.fields:
            if f.size and f.since > blk.since:
                out.add(f.since)
        for g in blk.groups:
            if g.since > blk.since:
                out.add(g.since)
            out |= self.versioned(g)
        for d in blk.datas:
            if d.since > blk.since:
                out.add(d.since)
        return out

    def layout_changed(self, blk, version):
        for g in blk.groups:
            if g.since > version or self.layout_changed(g, version):
                return True
        return any(d.since > version for d in blk.datas)

    def message(self, m):
        p, P = self.p, self.p.upper()
        fn = '%s_%s' % (p, m.path)
        seed = (self.s.package, m.name)
        self.w('static void test_%s(void **state)' % m.path, '{', '    (void)state;',
               '    static uint8_t buf[65536];', '    struct %s em, *e = &em;' % fn,
               '    assert_int_equal(%s_wrap_and_apply_header(e, buf, sizeof(buf)), 0);' % fn)
        self.encode_fields(m, fn, 'e', seed)
        self.encode_block_rest(m, fn, 'e', seed)
        self.w('    size_t body_len = %s_encoded_length(e);' % fn,
               '    const uint8_t *body = buf + %s_MESSAGE_HEADER_ENCODED_LENGTH;' % P,
               '    assert_int_equal(%s_message_header_template_id(buf), %d);' % (p, m.id),
               '    assert_int_equal(%s_message_header_block_length(buf), %d);' % (p, m.block_length),
               '    assert_int_equal(%s_message_header_schema_id(buf), %d);' % (p, self.s.id),
               '    assert_int_equal(%s_message_header_version(buf), %d);' % (p, self.s.version),
               '    struct %s dm, *d = &dm;' % fn,
               '    assert_int_equal(%s_wrap_for_decode(d, body, body_len, %d, %d), 0);' %
               (fn, m.block_length, self.s.version))
        self.check_fields(m, fn, 'd', seed)
        self.check_block_rest(m, fn, 'd', seed)
        self.w('    assert_int_equal(%s_encoded_length(d), body_len);' % fn)
        self.check_json(m, fn, seed)
        self.w('    assert_int_equal(%s_message_print_json(%d, body, body_len, %d, %d, NULL, 0) > 0, 1);' %
               (p, m.id, m.block_length, self.s.version),
               '    for (size_t cut = 0; cut < body_len; cut++) {',
               '        uint8_t *copy = malloc(cut ? cut : 1);',
               '        assert_non_null(copy);',
               '        memcpy(copy, body, cut);',
               '        char out[256];',
               '        int rc = %s_print_json(copy, cut, %d, %d, out, sizeof(out));' %
               (fn, m.block_length, self.s.version),
               '        free(copy);',
               '        if (rc >= 0)',
               '            fail_msg("truncated at %zu of %zu bytes: accepted", cut, body_len);',
               '    }')
        for v in sorted(self.versioned(m)):
            older = v - 1
            if older < m.since and m.since > 0:
                continue
            self.w('    {', '    /* acting version %d: fields since version %d read as null */' % (older, v),
                   '    struct %s om, *o = &om;' % fn,
                   '    assert_int_equal(%s_wrap_for_decode(o, body, body_len, %d, %d), 0);' %
                   (fn, m.block_length, older))
            self.check_fields(m, fn, 'o', seed, older)
            # A group or var data added later changes the layout after the root block: the bytes
            # encoded at the current version are then not an older message, so stop at the root.
            if not self.layout_changed(m, older):
                self.check_block_rest(m, fn, 'o', seed, older)
            self.w('    }')
            break
        self.w('}', '')

    def generate(self):
        self.w('/* Generated by codecs/sbe/sbe_c_gen.py --tests from the SBE schema package "%s".' %
               self.s.package,
               ' * Round trip, JSON, truncation and version tests of every message. Do not edit. */',
               '#include <setjmp.h>', '#include <stdarg.h>', '#include <stddef.h>',
               '#include <stdint.h>', '#include <stdlib.h>', '#include <string.h>',
               '#include <cmocka.h>', '#include <jansson.h>', '', '#include "%s"' % self.header, '')
        for m in self.s.messages:
            self.message(m)
        self.w('int main(void)', '{', '    const struct CMUnitTest tests[] = {')
        for m in self.s.messages:
            self.w('        cmocka_unit_test(test_%s),' % m.path)
        self.w('    };', '    return cmocka_run_group_tests(tests, NULL, NULL);', '}', '')
        return '\n'.join(self.out)
