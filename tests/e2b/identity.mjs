// tests/e2b/identity.mjs - the sandbox's user, as an agent written for E2B meets it (docs/e2b.md,
// "Commands run as the sandbox's user"): `user`, uid and gid 1000, HOME /home/user, the workdir, so
// that ~/x written by a command is /home/user/x in the files API; the SDKs' `user` option: "user"
// works, "root" is refused with an error saying why (on commands, background commands, ptys and
// every files call) and nothing it asked for happens, an unknown name is envd's AuthenticationError.
// What a sandbox command cannot do as that user (mount, write the root or /etc, become root in a
// new user namespace) is tried too. tests/e2b/run runs it as root and as an unprivileged user.
import { Sandbox, AuthenticationError, SandboxError, CommandExitError } from 'e2b'
import { test, ok, eq, done, thrown } from './tap.mjs'

const sbx = await Sandbox.create({ timeoutMs: 300_000, metadata: { suite: 'identity' } })
const sh = async (cmd, opts) => (await sbx.commands.run(cmd, opts)).stdout
// what a command as the sandbox's user sees of /home/user/NAME
const exists = async name => (await sh(`test -e /home/user/${name} && echo yes || echo no`)).trim()
const rootWhy = 'user "root" is refused: cordon serve runs every command and file operation as "user" (uid 1000)'
const refusedRoot = (e, what) =>
  ok(e instanceof SandboxError && !(e instanceof CommandExitError) && e.message.includes(rootWhy),
     `${what} as root: refused, saying why`, e && `${e.name}: ${e.message}`)
const refusedBob = (e, what) =>
  ok(e instanceof AuthenticationError && e.message.includes("invalid username: 'bob'"),
     `${what} as bob: AuthenticationError, invalid username`, e && `${e.name}: ${e.message}`)

await test('who', async () => {
  eq(await sh('whoami'), 'user\n', 'whoami')
  eq(await sh('id'), 'uid=1000(user) gid=1000(user) groups=1000(user)\n', 'id')
  eq(await sh('echo "$HOME $USER $LOGNAME"; pwd'), '/home/user user user\n/home/user\n', 'HOME, USER, LOGNAME, the directory')
  eq(await sh('echo ~ ~user'), '/home/user /home/user\n', "the shell's ~ and ~user")
  eq(await sh(`python3 -c 'import os, pwd, grp; p = pwd.getpwuid(os.getuid()); print(p.pw_name, p.pw_dir, grp.getgrgid(os.getgid()).gr_name, os.path.expanduser("~"))'`),
     'user /home/user user /home/user\n', "python's pwd, grp and expanduser")
  eq(await sh('id -u user; id -g user; getent passwd 1000 | cut -d: -f1,6'), '1000\n1000\nuser:/home/user\n',
     'the account by name and by id')
  eq(await sh('echo x', { user: 'user' }), 'x\n', 'user: "user" named: the same user')
})

await test('home is the workdir', async () => {
  await sh('echo from-a-command > ~/x && mkdir -p ~/d && echo in-d > ~/d/y')
  eq(await sbx.files.read('/home/user/x'), 'from-a-command\n', '~/x is /home/user/x in files.read')
  const list = await sbx.files.list('/home/user')
  const x = list.find(e => e.name === 'x')
  ok(x && x.path === '/home/user/x' && x.owner === 'user' && x.group === 'user',
     'files.list(/home/user) has x, owned by "user"', list)
  eq(await sbx.files.read('/home/user/d/y'), 'in-d\n', '~/d/y in files.read')
  await sbx.files.write('/home/user/w', 'from-files')
  eq(await sh('cat ~/w; stat -c "%U:%G %u:%g" ~/w'), 'from-filesuser:user 1000:1000\n',
     'files.write lands in ~ as the user')
  eq(await sh('ls -A ~ | grep -c "^\\.gitconfig$" || true'), '0\n', 'nothing of cordon\'s put in the home')
})

await test('user root: refused, never run as another', async () => {
  refusedRoot(await thrown(() => sbx.commands.run('touch /home/user/root-run; id -u', { user: 'root' })), 'commands.run')
  refusedRoot(await thrown(() => sbx.commands.run('touch /home/user/root-bg', { user: 'root', background: true })), 'commands.run in the background')
  refusedRoot(await thrown(() => sbx.pty.create({ user: 'root', cols: 80, rows: 24, onData: () => {}, cmd: undefined })), 'pty.create')
  refusedRoot(await thrown(() => sbx.files.write('/home/user/root-file', 'x', { user: 'root' })), 'files.write')
  refusedRoot(await thrown(() => sbx.files.write([{ path: '/home/user/root-file2', data: 'x' }], { user: 'root' })), 'files.write of a list')
  refusedRoot(await thrown(() => sbx.files.read('/home/user/x', { user: 'root' })), 'files.read')
  refusedRoot(await thrown(() => sbx.files.list('/home/user', { user: 'root' })), 'files.list')
  refusedRoot(await thrown(() => sbx.files.makeDir('/home/user/root-dir', { user: 'root' })), 'files.makeDir')
  refusedRoot(await thrown(() => sbx.files.remove('/home/user/x', { user: 'root' })), 'files.remove')
  refusedRoot(await thrown(() => sbx.files.rename('/home/user/x', '/home/user/root-moved', { user: 'root' })), 'files.rename')
  refusedRoot(await thrown(() => sbx.files.getInfo('/home/user/x', { user: 'root' })), 'files.getInfo')
  const r = await fetch(await sbx.downloadUrl('/home/user/x', { user: 'root' }))
  ok(r.status === 403 && (await r.json()).message.includes(rootWhy), 'a download URL for root: 403 saying why')
  const form = new FormData()
  form.append('file', new Blob(['x']), 'root-upload')
  const u = await fetch(await sbx.uploadUrl('/home/user/root-upload', { user: 'root' }), { method: 'POST', body: form })
  ok(u.status === 403, 'an upload URL for root: 403', u.status)
  eq(await sh('for f in root-run root-bg root-file root-file2 root-dir root-moved root-upload; do test -e ~/$f && echo $f; done; cat ~/x'),
     'from-a-command\n', '... and none of it happened: nothing made, x neither removed nor moved')
})

await test('an unknown user', async () => {
  refusedBob(await thrown(() => sbx.commands.run('touch /home/user/bob-run', { user: 'bob' })), 'commands.run')
  refusedBob(await thrown(() => sbx.files.write('/home/user/bob-file', 'x'.repeat(1 << 20), { user: 'bob' })), 'files.write of 1 MiB')
  refusedBob(await thrown(() => sbx.files.read('/home/user/x', { user: 'bob' })), 'files.read')
  refusedBob(await thrown(() => sbx.files.list('/home/user', { user: 'bob' })), 'files.list')
  eq(`${await exists('bob-run')} ${await exists('bob-file')}`, 'no no', '... and none of it happened')
})

// what the sandbox's user, the one identity there is, cannot do (each beside what it can)
await test('the user cannot escape', async () => {
  const fails = async (cmd, what) => {
    const e = await thrown(() => sbx.commands.run(cmd))
    ok(e instanceof CommandExitError && e.exitCode !== 0, what, e ? `${e.exitCode}: ${e.stderr}` : 'it succeeded')
  }
  await fails('mount -t tmpfs none /home/user/d', 'mount: refused')
  await fails('mount -o remount,rw /', 'remount / read-write: refused')
  await fails('touch /etc/cordon-identity-test', 'write /etc: refused')
  await fails('touch /usr/cordon-identity-test', 'write /usr: refused')
  await fails('unshare -r id', 'unshare -r (root in a new user namespace): refused')
  await fails('chown 0:0 ~/w', 'chown a file to root: refused')
  eq(await sh('grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status | cut -f2 | sort -u'),
     '0000000000000000\n', 'no capability in any set')
  eq(await sh('stat -c %U:%G ~/w'), 'user:user\n', '... ~/w still the user\'s')
})

await sbx.kill()
done()
