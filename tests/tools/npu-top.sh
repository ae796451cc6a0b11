#!/bin/sh
# SPDX-License-Identifier: MIT
# CLI test of npu-top against fake /dev, /sys, /proc and emulator stat
# files under a temporary root (NPU_TOP_ROOT): device discovery, fused
# clusters, busy % from counters a background writer keeps advancing,
# process rows from fdinfo, emulator busy and link load, JSON Lines,
# the text table, the TUI under a pseudo-terminal, malformed files and
# exit codes with one-line messages.  Run from the repository root after
# `make build/bin/npu-top`; $1 overrides the binary.
set -u

BIN=${1:-build/bin/npu-top}
TMP=$(mktemp -d)
WRITER=
cleanup() {
	rm -f "$TMP/run"
	[ -n "$WRITER" ] && kill "$WRITER" 2>/dev/null && wait "$WRITER" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
pass=0
fail=0
unset NPU_EMU_STATS_DIR NPU_TOP_ROOT

ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

# check NAME PYTHON-EXPR: EXPR sees the JSON output of the last run as j,
# its first device as d0 and the device named like the emulator as emu.
check() {
	if python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
devs = {d['name']: d for d in j['devices']}
d0 = j['devices'][0] if j['devices'] else None
emu = devs.get('emu:' + sys.argv[2])
sys.exit(0 if ($2) else 1)" "$TMP/out.json" "$EMU_PID" 2>"$TMP/py.err"; then ok
	else no "$1"; cat "$TMP/py.err"; fi
}

# expect_exit NAME CODE ARGS...: exit status CODE and exactly one line on stderr.
expect_exit() {
	name=$1 code=$2
	shift 2
	"$BIN" "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ]; then ok
	else no "$name: exit $rc (want $code), $lines stderr lines: $(cat "$TMP/err")"; fi
}

if [ ! -x "$BIN" ]; then
	echo "$BIN not built (make build/bin/npu-top)"
	echo "0 passed, 1 failed"
	exit 1
fi

# ---- command line ----
expect_exit "unknown long option" 2 --frobnicate
expect_exit "unknown short option" 2 -x
expect_exit "interval 0" 2 -d 0
expect_exit "interval below 0.1" 2 -d 0.05
expect_exit "interval abc" 2 -d abc
expect_exit "interval nan" 2 -d nan
expect_exit "missing interval" 2 -d
expect_exit "count 0" 2 --json -n 0
expect_exit "count -1" 2 --json -n -1
expect_exit "count x" 2 --json -n 3x
expect_exit "bad sort" 2 --sort size
expect_exit "stray argument" 2 --json extra
expect_exit "once with -n" 2 --once -n 2
if "$BIN" --help | grep -q -- '--once'; then ok; else no "--help"; fi

# ---- no device ----
mkdir -p "$TMP/empty/dev" "$TMP/empty/proc" "$TMP/empty/tmp"
export NPU_TOP_ROOT="$TMP/empty"
expect_exit "no device" 1 --once --json
MSG='npu-top: no NPU found: no /dev/accel/accel* bound to npu and no emulator running'
MSG="$MSG (see npu-run --device emu)"
if [ "$(cat "$TMP/err")" = "$MSG" ]; then ok; else no "no-device message: $(cat "$TMP/err")"; fi
# An accel node of another driver (no npu/ sysfs group) is not an NPU.
mkdir -p "$TMP/empty/dev/accel" "$TMP/empty/sys/class/accel/accel0/device"
: >"$TMP/empty/dev/accel/accel0"
expect_exit "foreign accel driver" 1 --once --json

# ---- a fake kernel device, two clients, an emulator ----
R=$TMP/root
EMU_DIR=$TMP/emu
EMU_PID=$$			# a live pid: this shell
DEAD_PID=999999
NPU=$R/sys/class/accel/accel0/device/npu
mkdir -p "$R/dev/accel" "$NPU" "$R/sys/class/accel/accel1/device" "$R/tmp" \
	"$R/proc/4242/fd" "$R/proc/4242/fdinfo" "$R/proc/5151/fd" "$R/proc/5151/fdinfo" \
	"$R/proc/6060/fd" "$R/proc/6060/fdinfo" "$R/proc/$EMU_PID" "$EMU_DIR"
: >"$R/dev/accel/accel0"
: >"$R/dev/accel/accel1"	# not bound to npu
echo 'clusters=14 tpbs=4 mesh=4x4 queues=4 sram=33554432 hbsm=2097152 clock_mhz=1000' \
	>"$NPU/geometry"
echo 0x2001 >"$NPU/defect_mask"
echo 0x1ffe >"$NPU/healthy_mask"
echo 0x1fe0 >"$NPU/free_clusters"
echo 3 >"$NPU/reset_count"
echo '1 0 0 2' >"$NPU/queue_depth"
echo npu-test-app >"$R/proc/4242/comm"
echo other-app >"$R/proc/5151/comm"
echo foreign >"$R/proc/6060/comm"
# 4242: fd 3 and its dup fd 4 (same client id: one row), fd 5 is no device.
ln -s "$R/dev/accel/accel0" "$R/proc/4242/fd/3"
ln -s /dev/accel/accel0 "$R/proc/4242/fd/4"
ln -s /dev/null "$R/proc/4242/fd/5"
ln -s "$R/dev/accel/accel0" "$R/proc/5151/fd/7"
# 6060: accel1 (not npu), and an fd whose fdinfo names another driver.
ln -s "$R/dev/accel/accel1" "$R/proc/6060/fd/3"
ln -s "$R/dev/accel/accel0" "$R/proc/6060/fd/4"
printf 'pos:\t0\nflags:\t02100002\ndrm-driver:\tother\ndrm-client-id:\t1\n' \
	>"$R/proc/6060/fdinfo/3"
cp "$R/proc/6060/fdinfo/3" "$R/proc/6060/fdinfo/4"
: >"$R/proc/4242/fdinfo/5"
# 5151: no npu-* keys, an idle engine, memory in MiB plus a second region in bytes.
printf '%s\n' 'pos:	0' 'drm-driver:	npu' 'drm-client-id:	9' 'drm-pdev:	0000:00:04.0' \
	'drm-engine-npu:	5000 ns' 'drm-engine-capacity-npu:	12' \
	'drm-total-memory:	2 MiB' 'drm-resident-memory:	2 MiB' 'drm-total-vram:	512' \
	>"$R/proc/5151/fdinfo/7"

# The emulator's link l = node*4 + dir: node 5 east (20) carries half of
# what a link can move, node 6 south (27) a tenth.  Busy: C0 50 %, C1 25 %.
emu_file() {
	c=$(($1 * 100000))
	links=
	l=0
	while [ $l -lt 64 ]; do
		case $l in
		20) v=$((c * 32)) ;;
		27) v=$((c * 64 / 10)) ;;
		*) v=7 ;;
		esac
		links="$links $v"
		l=$((l + 1))
	done
	printf '%s\n' "pid: $2" 'comm: npu-run' 'clusters: 14' 'tpbs: 4' 'mesh: 4x4' \
		'clock_mhz: 1000' 'defect_mask: 0x0' 'healthy_mask: 0x3fff' "cycles: $c" \
		"jobs: $1" "cluster_busy: $((c / 2)) $((c / 4)) 0 0 0 0 0 0 0 0 0 0 0 0" \
		'unit_busy: 1 2 3' "link_bytes:$links" 'dma_bytes: 0 0' 'contexts: 1' \
		'context_clusters: 0x3' 'memory: 1048576' 'updated_ns: 1700000000000000000'
}

# One tick of every counter, each file replaced atomically like sysfs reads.
tick() {
	i=$1
	b=$((i * 20000000))
	echo "$b $b $b $b $b 777 0 0 0 0 0 0 0 $b" >"$NPU/busy_ns.t" &&
		mv "$NPU/busy_ns.t" "$NPU/busy_ns"
	l=0 links=
	while [ $l -lt 64 ]; do
		if [ $l -eq 8 ]; then links="$links $((i * 1000000000))"; else links="$links 5"; fi
		l=$((l + 1))
	done
	echo "${links# }" >"$NPU/link_bytes.t" && mv "$NPU/link_bytes.t" "$NPU/link_bytes"
	{
		printf 'pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t1030\n'
		printf 'drm-driver:\tnpu\ndrm-client-id:\t7\ndrm-pdev:\t0000:00:04.0\n'
		for c in 0 1 2 3 4 5 6 7 8 9 10 11 12 13; do
			case $c in 1 | 2 | 3 | 4) ns=$b ;; *) ns=0 ;; esac
			printf 'drm-engine-cluster%s:\t%s ns\n' $c $ns
			printf 'drm-cycles-cluster%s:\t%s\n' $c $ns
		done
		printf 'drm-engine-npu:\t%s ns\ndrm-engine-capacity-npu:\t12\n' $((b * 4))
		printf 'drm-total-memory:\t1536 KiB\ndrm-shared-memory:\t0\n'
		printf 'drm-active-memory:\t0\ndrm-resident-memory:\t1536 KiB\n'
		printf 'drm-purgeable-memory:\t0\nnpu-contexts:\t2\nnpu-clusters:\t0x1e\n'
	} >"$R/proc/4242/fdinfo/3.t" && mv "$R/proc/4242/fdinfo/3.t" "$R/proc/4242/fdinfo/3"
	# A copy is not atomic: a sample may read fd 4 half-written (the same
	# client twice, its fields torn).  Write it aside and rename it in.
	cp "$R/proc/4242/fdinfo/3" "$R/proc/4242/fdinfo/4.t" && mv "$R/proc/4242/fdinfo/4.t" "$R/proc/4242/fdinfo/4"
	emu_file "$i" "$EMU_PID" >"$EMU_DIR/.t" && mv "$EMU_DIR/.t" "$EMU_DIR/$EMU_PID"
}

tick 1
emu_file 5 "$DEAD_PID" >"$EMU_DIR/$DEAD_PID"	# no $R/proc/999999: ignored
echo 'half-writ' >"$EMU_DIR/$EMU_PID.tmp"		# a writer's temporary file
: >"$R/run"
(
	i=2
	while [ -f "$R/run" ]; do
		tick $i
		i=$((i + 1))
		sleep 0.05
	done
) &
WRITER=$!

export NPU_TOP_ROOT="$R" NPU_EMU_STATS_DIR="$EMU_DIR"
if "$BIN" --once --json -d 0.4 >"$TMP/out.json" 2>"$TMP/err"; then ok
else no "once json: $(cat "$TMP/err")"; fi
check "devices" "list(devs) == ['accel0', 'emu:' + sys.argv[2]]"
check "kernel kind" "d0['kind'] == 'kernel' and emu['kind'] == 'emulator'"
check "geometry" "d0['clusters'] == 14 and d0['tpbs'] == 4 and d0['mesh'] == [4, 4]"
check "clock, sram" "d0['clock_mhz'] == 1000 and d0['sram_bytes'] == 33554432"
check "masks" "d0['defect_mask'] == 0x2001 and d0['healthy_mask'] == 0x1ffe"
check "free clusters" "d0['free_clusters'] == 0x1fe0"
check "fused" "d0['fused'] == [0, 13]"
check "fused busy null" "d0['cluster_busy_pct'][0] is None and d0['cluster_busy_pct'][13] is None"
check "14 busy entries" "len(d0['cluster_busy_pct']) == 14"
check "growing clusters busy" "all(0 < d0['cluster_busy_pct'][c] <= 100 for c in (1, 2, 3, 4))"
check "constant clusters idle" "all(d0['cluster_busy_pct'][c] == 0 for c in range(5, 13))"
check "device busy mean" \
	"abs(d0['busy_pct'] - sum(d0['cluster_busy_pct'][1:13]) / 12) < 0.05"
check "resets" "d0['resets'] == 3"
check "queue depth" "d0['queue_depth'] == [1, 0, 0, 2]"
check "kernel link load" "d0['link_load_pct'][8] > 0 and len(d0['link_load_pct']) == 64"
check "kernel idle links" "all(d0['link_load_pct'][l] == 0 for l in range(64) if l != 8)"
check "kernel hottest" \
	"d0['hottest_link']['index'] == 8 and d0['hottest_link']['dir'] == 'east' and \
	d0['hottest_link']['from'] == 'C1' and d0['hottest_link']['to'] == 'DDR'"
check "two clients" "sorted(p['pid'] for p in d0['processes']) == [4242, 5151]"
check "client fields" "[(p['name'], p['client_id'], p['contexts'], p['clusters']) \
	for p in d0['processes'] if p['pid'] == 4242] == [('npu-test-app', 7, 2, [1, 2, 3, 4])]"
# 4242 holds C1-C4 and its engine time is theirs: the same busy % (give or
# take a writer tick between reading busy_ns and fdinfo).
check "client busy" "0.6 < [p for p in d0['processes'] if p['pid'] == 4242][0]['busy_pct'] / \
	(sum(d0['cluster_busy_pct'][1:5]) / 4) < 1.6"
check "client memory KiB" \
	"[p for p in d0['processes'] if p['pid'] == 4242][0]['memory_bytes'] == 1536 * 1024"
check "idle client" "[p for p in d0['processes'] if p['pid'] == 5151][0]['busy_pct'] == 0"
check "client memory MiB + bytes" \
	"[p for p in d0['processes'] if p['pid'] == 5151][0]['memory_bytes'] == 2 * 1048576 + 512"
check "optional keys null" "[(p['contexts'], p['clusters']) for p in d0['processes'] \
	if p['pid'] == 5151] == [(None, None)]"
check "device memory" "d0['memory_bytes'] == 1536 * 1024 + 2 * 1048576 + 512"
check "sorted by busy" "d0['processes'][0]['pid'] == 4242"
check "emu geometry" \
	"emu['clusters'] == 14 and emu['fused'] == [] and emu['pid'] == int(sys.argv[2])"
check "emu busy from cycles" \
	"abs(emu['cluster_busy_pct'][0] - 50) < 0.01 and \
	abs(emu['cluster_busy_pct'][1] - 25) < 0.01"
check "emu idle clusters" "all(v == 0 for v in emu['cluster_busy_pct'][2:])"
check "emu link load" \
	"abs(emu['link_load_pct'][20] - 50) < 0.01 and abs(emu['link_load_pct'][27] - 10) < 0.01"
check "emu idle link" "emu['link_load_pct'][0] == 0"
check "emu hottest" "emu['hottest_link'] == {'index': 20, 'node': 5, 'dir': 'east', \
	'from': 'C3', 'to': 'C4', 'pct': 50.0}"
check "emu process" "[(p['pid'], p['name'], p['contexts'], p['clusters']) \
	for p in emu['processes']] \
	== [(int(sys.argv[2]), 'npu-run', 1, [0, 1])]"
check "emu process busy" "abs(emu['processes'][0]['busy_pct'] - 37.5) < 0.01"
check "emu memory" "emu['memory_bytes'] == 1048576 and emu['jobs'] > 1"
check "interval" "0.3 < j['interval_s'] < 2 and j['time'] > 1e9"

# JSON Lines: -n 3 gives three objects, one per line.
if "$BIN" --json -n 3 -d 0.1 >"$TMP/lines" 2>"$TMP/err"; then ok; else no "json -n 3"; fi
if python3 -c "
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, len(lines)
for l in lines:
    assert json.loads(l)['devices'][0]['name'] == 'accel0'
" "$TMP/lines" 2>"$TMP/py.err"; then ok; else no "three JSON lines"; cat "$TMP/py.err"; fi

# --record: one JSON line per sample with the raw busy ns (ns from every
# source: the emulator's cycles at its 1000 MHz) and the rates; nothing on
# stdout without --json.
if "$BIN" --record "$TMP/rec.jsonl" -n 3 -d 0.3 >"$TMP/rec.out" 2>"$TMP/err" &&
	[ ! -s "$TMP/rec.out" ]; then ok; else no "record -n 3: $(cat "$TMP/err" "$TMP/rec.out")"; fi
if python3 -c "
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, len(lines)
recs = [json.loads(l) for l in lines]
emu = 'emu:' + sys.argv[2]
for a, b in zip(recs, recs[1:]):
    assert b['time'] > a['time'] and b['mono_ns'] > a['mono_ns'], (a['time'], b['time'])
for r in recs:
    assert [d['name'] for d in r['devices']] == ['accel0', emu], r['devices']
    assert sorted(p['pid'] for p in r['processes']) == sorted([4242, 5151, int(sys.argv[2])])
    k, e = r['devices']
    # accel0: C1-C4 tick b = i * 20000000 ns each, C5 holds 777; C0, C13 fused.
    assert len(k['cluster_busy_ns']) == 14 and (k['busy_ns'] - 777) % 80000000 == 0
    assert k['busy_ns'] == sum(k['cluster_busy_ns'][1:13]) and k['device_ns'] is None
    # emu: C0 busy c/2, C1 c/4 of c simulated cycles, 1 ns each.
    assert e['busy_ns'] * 4 == e['device_ns'] * 3 and e['device_ns'] % 100000 == 0
    assert all(0 <= (v or 0) <= 100 for d in r['devices'] for v in d['cluster_busy_pct'])
    p = [p for p in r['processes'] if p['pid'] == 4242][0]
    assert p['device'] == 'accel0' and p['client_id'] == 7 and p['busy_ns'] % 80000000 == 0
for a, b in zip(recs, recs[1:]):
    assert b['devices'][0]['busy_ns'] >= a['devices'][0]['busy_ns']
# The rate is over the interval: only where the emulator's writer ticked
# within it (a loaded machine can sample twice between two ticks).
moved = [b['devices'][1] for a, b in zip(recs, recs[1:])
         if b['devices'][1]['device_ns'] > a['devices'][1]['device_ns']]
assert moved, 'the emulator file never changed between samples'
for e in moved:
    assert abs(e['busy_pct'] - (50 + 25) / 14) < 0.01, e['busy_pct']
" "$TMP/rec.jsonl" "$EMU_PID" 2>"$TMP/py.err"; then ok
else no "record lines"; cat "$TMP/py.err"; fi
expect_exit "record unwritable" 1 --record "$TMP/no/such/dir/rec" -n 1 -d 0.1
expect_exit "record empty name" 2 --record= -n 1

# A process named 'café' is 'café' in the JSON (UTF-8 as is); a name that
# is not UTF-8 gets '?' for its bad bytes and the JSON stays valid.
printf 'caf\303\251\n' >"$R/proc/5151/comm"
if "$BIN" --once --json -d 0.1 >"$TMP/out.json" 2>"$TMP/err"; then ok; else no "café run"; fi
check "café" "[p['name'] for p in d0['processes'] if p['pid'] == 5151] == ['caf\u00e9']"
if grep -q "\"caf$(printf '\303\251')\"" "$TMP/out.json"; then ok; else no "café not as is"; fi
printf 'bad\377name\n' >"$R/proc/5151/comm"
if "$BIN" --once --json -d 0.1 >"$TMP/out.json" 2>"$TMP/err"; then ok; else no "bad name run"; fi
check "invalid UTF-8 name" "[p['name'] for p in d0['processes'] if p['pid'] == 5151] == ['bad?name']"
echo other-app >"$R/proc/5151/comm"

# The emulator's default directory is <root>/tmp/npu-emu-<uid>.
mkdir -p "$R/tmp/npu-emu-$(id -u)"
emu_file 3 "$EMU_PID" >"$R/tmp/npu-emu-$(id -u)/$EMU_PID"
if (unset NPU_EMU_STATS_DIR && "$BIN" --once --json -d 0.1 >"$TMP/out.json"); then ok
else no "default emulator dir run"; fi
check "default emulator dir" "emu is not None and emu['cluster_busy_pct'][0] == 0"

# Text tables for humans without a terminal.
if "$BIN" --once -d 0.2 >"$TMP/table" 2>"$TMP/err"; then ok; else no "once text"; fi
if grep -q '^accel0  kernel' "$TMP/table" && grep -q 'fused 0,13' "$TMP/table" &&
	grep -q '^PID  *NAME  *DEVICE' "$TMP/table" &&
	grep -q '^4242  *npu-test-app  *accel0  *7  *2  *1-4 ' "$TMP/table" &&
	grep -q 'hottest C3 -> C4 (east, link 20) 50.0%' "$TMP/table"
then ok; else no "text table:"; cat "$TMP/table"; fi
if "$BIN" -b -n 2 -d 0.1 | grep -c '^npu-top ' | grep -qx 2; then ok; else no "batch -n 2"; fi

# Stop the writer: counters stand still, nothing is hot.  Without link
# counters the heat map says so.
rm -f "$R/run"
kill "$WRITER" 2>/dev/null
wait "$WRITER" 2>/dev/null
WRITER=
if "$BIN" --once --json -d 0.1 >"$TMP/out.json"; then ok; else no "idle run"; fi
check "stopped counters idle" "d0['busy_pct'] == 0 and emu['busy_pct'] == 0"
check "idle links" "d0['link_load_pct'] == [0] * 64 and d0['hottest_link'] is None and \
	emu['hottest_link'] is None"
rm -f "$NPU/link_bytes" "$NPU/link_bytes.t"
if "$BIN" --once --json -d 0.1 >"$TMP/out.json"; then ok; else no "no link counters run"; fi
check "no link counters" "d0['link_load_pct'] is None and d0['hottest_link'] is None"
if "$BIN" --once -d 0.1 | grep -q 'no link counters'; then ok; else no "text: no link counters"; fi

# ---- the TUI, under a pseudo-terminal: draws, quits on q, on SIGTERM ----
tui() {
	python3 - "$BIN" "$1" <<'EOF'
import fcntl, os, pty, select, signal, struct, sys, termios, time
binary, how = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.environ['TERM'] = 'xterm'
    os.execv(binary, [binary, '-d', '0.2'])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 50, 120, 0, 0))
os.kill(pid, signal.SIGWINCH)
out = b''
def pump(seconds):
    global out
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                return
pump(1.0)
if how == 'q':
    os.write(fd, b'h')
    pump(0.3)
    os.write(fd, b'q')
else:
    os.kill(pid, signal.SIGTERM)
status = None
deadline = time.time() + 10
while time.time() < deadline:
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = st
        break
    pump(0.05)
    time.sleep(0.01)    # pump returns at once when the pty is closed
pump(0.2)
text = out.decode('latin-1')
missing = [w for w in ('accel0', 'CCB', 'DDR', 'C13', 'fused', 'npu-test-app', 'emu:',
                       'npu-top keys') if w not in text]
if how != 'q':
    missing = [w for w in missing if w != 'npu-top keys']
if status is None:
    os.kill(pid, signal.SIGKILL)
    sys.exit('did not exit')
if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
    sys.exit('status %r' % status)
if missing:
    sys.exit('missing on screen: %s' % missing)
if '\x1b[?1049l' not in text[-200:]:
    sys.exit('terminal not restored')
EOF
}
if tui q 2>"$TMP/py.err"; then ok; else no "tui quits on q"; cat "$TMP/py.err"; fi
if tui term 2>"$TMP/py.err"; then ok; else no "tui exits on SIGTERM"; cat "$TMP/py.err"; fi

# ---- malformed files never crash npu-top ----
# no_crash NAME: exit 0 or 1 (no signal); with 0 the output is JSON.
no_crash() {
	"$BIN" --once --json -d 0.1 >"$TMP/out.json" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out.json" \
			2>"$TMP/py.err"; then ok; else no "$1: invalid JSON"; cat "$TMP/py.err"; fi
	elif [ "$rc" -eq 1 ]; then ok
	else no "$1: exit $rc"; fi
}
for f in geometry defect_mask healthy_mask free_clusters busy_ns reset_count queue_depth; do
	printf 'garbage\377\000x' >"$NPU/$f"
done
head -c 3000 /dev/urandom >"$R/proc/4242/fdinfo/3"
head -c 3000 /dev/urandom >"$EMU_DIR/$EMU_PID"
no_crash "binary garbage"
check "garbage device listed" "d0['name'] == 'accel0' and d0['clusters'] == 0"

echo 'clusters=99 tpbs=-4 mesh=9x9 clock_mhz=99999999999999999999999 sram=0x' >"$NPU/geometry"
echo '1 2 3 99999999999999999999999 5' >"$NPU/busy_ns"
echo '0xffffffffffffffffff' >"$NPU/defect_mask"
echo '1 2 3' >"$NPU/link_bytes"
printf 'drm-driver:\tnpu\ndrm-client-id:\t-1\ndrm-engine-npu:\t18446744073709551616 ns\n' \
	>"$R/proc/4242/fdinfo/3"
printf 'drm-total-memory:\t18446744073709551615 MiB\ndrm-total-x:\t9 ZiB\nnpu-clusters: zz\n' \
	>>"$R/proc/4242/fdinfo/3"
printf 'clusters: 40\nmesh: 0x0\ncycles: 5\ncluster_busy: 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9\n' \
	>"$EMU_DIR/$EMU_PID"
printf 'link_bytes: 1\ndefect_mask: 0xffffffffff\n:\n::::\nkey only\n' >>"$EMU_DIR/$EMU_PID"
no_crash "huge and truncated numbers"
check "truncated busy list" "len(d0['cluster_busy_pct']) == 3 and d0['mesh'] is None"

for f in "$NPU"/* "$R/proc/4242/fdinfo/3" "$R/proc/5151/fdinfo/7" "$EMU_DIR/$EMU_PID"; do
	: >"$f"
done
rm -f "$R/proc/4242/comm"
no_crash "empty files"
rm -rf "$NPU/geometry" "$R/proc/5151/fdinfo/7"
mkdir "$NPU/geometry" "$R/proc/5151/fdinfo/7"	# directories where files belong
ln -s "$R/proc/4242/fd/3" "$R/proc/4242/fd/9"	# a link to a link
ln -s "$R/proc/4242/fd/8" "$R/proc/4242/fd/8"	# a link to itself
ln -s /dev/accel/accel0/x/.. "$R/proc/4242/fd/10"	# not a node name
no_crash "directories and odd links"
check "emu still listed" "emu is not None"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
