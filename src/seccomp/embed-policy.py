#!/usr/bin/env python3
# embed-policy.py INPUT OUTPUT SYMBOL - a policy file as a C string, so that the cordon binary
# carries it (baseline.policy: the rules no installed file may change).
import sys

src, dst, sym = sys.argv[1:4]
data = open(src, 'rb').read()
body = ''.join('\\x%02x' % b for b in data)
lines = [body[i:i + 96] for i in range(0, len(body), 96)]
with open(dst, 'w') as f:
    f.write('/* generated from %s by embed-policy.py: do not edit */\n' % src.split('/')[-1])
    f.write('#include <stddef.h>\n')
    f.write('extern const char %s[];\nextern const size_t %s_len;\n' % (sym, sym))
    f.write('const char %s[] =\n' % sym)
    f.write('\n'.join('\t"%s"' % l for l in lines) + ';\n')
    f.write('const size_t %s_len = %d;\n' % (sym, len(data)))
