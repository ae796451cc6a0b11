/* SPDX-License-Identifier: MIT */
/*
 * How an emulator backend shows itself to monitors (npu-top).
 *
 * The emulated NPU lives inside the process that uses it (libnpu's
 * emulator backend), so no device node or sysfs directory exists for it.
 * Instead each process with an open emulator writes a small text file,
 * replaced atomically (write a temporary file, rename) after every job and
 * removed when the device closes:
 *
 *   $NPU_EMU_STATS_DIR/<pid>, default /tmp/npu-emu-<uid>/<pid>
 *
 * One "key: value" per line, like fdinfo; numbers are decimal unless
 * written 0x...; lists are space separated.  Cycles are simulated device
 * cycles (cluster busy % = delta cluster_busy / delta cycles).  A monitor
 * ignores a file whose pid no longer exists and keys it does not know.
 *
 *   pid: 1234
 *   comm: npu-run
 *   clusters: 14              physical clusters (including fused ones)
 *   tpbs: 4
 *   mesh: 4x4
 *   clock_mhz: 1000
 *   defect_mask: 0x0
 *   healthy_mask: 0x3fff
 *   cycles: 123456            simulated cycles of every job so far
 *   jobs: 17                  jobs completed
 *   cluster_busy: c0 c1 ...   per physical cluster, busy cycles (clusters entries)
 *   unit_busy: ...            per physical cluster, TCU CVU DTDU CSU busy cycles
 *                             summed over its TPBs (clusters x 4 entries)
 *   link_bytes: ...           per directed NoC link, bytes (mesh_x*mesh_y*4
 *                             entries; link l leaves node l/4 east, west,
 *                             north, south for l%4 = 0..3)
 *   dma_bytes: e0 e1          per DMA engine
 *   contexts: 1               open contexts
 *   context_clusters: 0xf     physical clusters the open contexts hold
 *   memory: 1048576           bytes of device buffers
 *   updated_ns: ...           CLOCK_REALTIME of this write
 */
#ifndef NPU_EMU_STATS_H
#define NPU_EMU_STATS_H

#define NPU_EMU_STATS_DIR_ENV		"NPU_EMU_STATS_DIR"
#define NPU_EMU_STATS_DIR_FMT		"/tmp/npu-emu-%u"	/* uid */

#endif /* NPU_EMU_STATS_H */
