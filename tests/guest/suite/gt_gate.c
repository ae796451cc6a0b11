/* SPDX-License-Identifier: MIT */
/*
 * Fences the test signals itself, from two other drivers: sw_sync
 * (debugfs sync/sw_sync, CONFIG_SW_SYNC: the debug guest kernel) and vgem
 * (a second DRM driver that exports buffers and fences them: built in on
 * the debug kernel, a module in the stock guest's initramfs).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "npu_gt.h"

int gt_prime_export(int fd, uint32_t handle, uint32_t flags, int *dmabuf)
{
	struct drm_prime_handle p = { .handle = handle, .flags = flags, .fd = -1 };
	int rc = gt_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	if (!rc)
		*dmabuf = p.fd;
	return rc;
}

/* ---- sw_sync -------------------------------------------------------------------- */

/* drivers/dma-buf/sw_sync.c (not in the uAPI headers). */
struct gt_sw_sync_create_fence {
	uint32_t value;
	char name[32];
	int32_t fence;
};

#define GT_SW_SYNC_CREATE_FENCE	_IOWR('W', 0, struct gt_sw_sync_create_fence)
#define GT_SW_SYNC_INC		_IOW('W', 1, uint32_t)
#define GT_SW_SYNC_PATH		"/sys/kernel/debug/sync/sw_sync"

int gt_sw_sync_open(void)
{
	int fd = open(GT_SW_SYNC_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int gt_sw_sync_fence(int timeline, uint32_t value)
{
	struct gt_sw_sync_create_fence c = { .value = value };

	strcpy(c.name, "npu-gt");
	if (ioctl(timeline, GT_SW_SYNC_CREATE_FENCE, &c))
		return -errno;
	return c.fence;
}

int gt_sw_sync_inc(int timeline, uint32_t n)
{
	return ioctl(timeline, GT_SW_SYNC_INC, &n) ? -errno : 0;
}

/* ---- vgem ----------------------------------------------------------------------- */

/* include/uapi/drm/vgem_drm.h (not in libdrm's headers). */
struct gt_vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct gt_vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define GT_VGEM_FENCE_WRITE	0x1
#define GT_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct gt_vgem_fence_attach)
#define GT_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct gt_vgem_fence_signal)
#define GT_VGEM_KO		"/lib/modules/opt/vgem.ko"

/*
 * A file of vgem's primary node (dumb buffers need it), loading vgem.ko
 * from the initramfs first if needed; -1 when this kernel has no vgem.
 */
int gt_vgem_open(void)
{
	char path[64], name[16];

	if (access("/sys/module/vgem", F_OK)) {
		int ko = open(GT_VGEM_KO, O_RDONLY | O_CLOEXEC);

		if (ko < 0)
			return -1;
		if (syscall(SYS_finit_module, ko, "", 0) && errno != EEXIST) {
			fprintf(stderr, "npu-guest-test: loading vgem: %s\n", strerror(errno));
			close(ko);
			return -1;
		}
		close(ko);
	}
	for (int i = 0; i < 16; i++) {
		struct drm_version v = { 0 };
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

/* A vgem dumb buffer of @size bytes (a multiple of 4 KiB), mapped. */
uint32_t gt_vgem_bo(int vfd, uint64_t size, uint8_t **map)
{
	struct drm_mode_create_dumb c = {
		.width = 1024, .height = (uint32_t)(size / 4096), .bpp = 32,
	};
	struct drm_mode_map_dumb m = { 0 };

	ck_assert_msg(ioctl(vfd, DRM_IOCTL_MODE_CREATE_DUMB, &c) == 0,
		      "vgem CREATE_DUMB: %s", strerror(errno));
	ck_assert_uint_ge(c.size, size);
	m.handle = c.handle;
	ck_assert_msg(ioctl(vfd, DRM_IOCTL_MODE_MAP_DUMB, &m) == 0, "vgem MAP_DUMB: %s",
		      strerror(errno));
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vfd, (off_t)m.offset);
	ck_assert_msg(*map != MAP_FAILED, "mmap of a vgem BO: %s", strerror(errno));
	return c.handle;
}

/* Attach a pending vgem fence (write or read) to @bo; its id. */
uint32_t gt_vgem_fence(int vfd, uint32_t bo, bool write)
{
	struct gt_vgem_fence_attach a = {
		.handle = bo, .flags = write ? GT_VGEM_FENCE_WRITE : 0,
	};

	ck_assert_msg(ioctl(vfd, GT_IOCTL_VGEM_FENCE_ATTACH, &a) == 0,
		      "VGEM_FENCE_ATTACH: %s", strerror(errno));
	return a.out_fence;
}

void gt_vgem_signal(int vfd, uint32_t fence)
{
	struct gt_vgem_fence_signal sig = { .fence = fence };

	ck_assert_msg(ioctl(vfd, GT_IOCTL_VGEM_FENCE_SIGNAL, &sig) == 0,
		      "VGEM_FENCE_SIGNAL: %s", strerror(errno));
}

/* ---- gates ------------------------------------------------------------------------ */

bool gt_gate_init(struct gt_gate *g)
{
	memset(g, 0, sizeof(*g));
	g->vfd = -1;
	g->tl = gt_sw_sync_open();
	if (g->tl >= 0) {
		g->kind = "sw_sync";
		return true;
	}
	g->vfd = gt_vgem_open();
	if (g->vfd >= 0) {
		g->kind = "vgem";
		g->vbo = gt_vgem_bo(g->vfd, 4096, &g->vmap);
		ck_assert_int_eq(gt_prime_export(g->vfd, g->vbo, DRM_CLOEXEC, &g->vdmabuf), 0);
		return true;
	}
	return false;
}

int gt_gate_fence(struct gt_gate *g)
{
	struct dma_buf_export_sync_file e = { .flags = DMA_BUF_SYNC_READ, .fd = -1 };
	int rc;

	if (g->tl >= 0) {
		rc = gt_sw_sync_fence(g->tl, ++g->value);
		ck_assert_msg(rc >= 0, "SW_SYNC_IOC_CREATE_FENCE: %s", strerror(-rc));
		return rc;
	}
	g->vfence = gt_vgem_fence(g->vfd, g->vbo, true);
	ck_assert_msg(ioctl(g->vdmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) == 0,
		      "EXPORT_SYNC_FILE of the vgem BO: %s", strerror(errno));
	return e.fd;
}

void gt_gate_release(struct gt_gate *g)
{
	int rc;

	if (g->tl >= 0) {
		rc = gt_sw_sync_inc(g->tl, 1);
		ck_assert_msg(rc == 0, "SW_SYNC_IOC_INC: %s", strerror(-rc));
	} else {
		gt_vgem_signal(g->vfd, g->vfence);
	}
}

void gt_gate_fini(struct gt_gate *g)
{
	if (g->tl >= 0) {
		close(g->tl);
	} else if (g->vfd >= 0) {
		munmap(g->vmap, 4096);
		close(g->vdmabuf);
		close(g->vfd);
	}
	memset(g, 0, sizeof(*g));
	g->tl = g->vfd = -1;
}
