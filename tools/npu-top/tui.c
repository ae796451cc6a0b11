// SPDX-License-Identifier: MIT
/*
 * npu-top: the ncurses terminal UI.
 *
 * Per device: a header line, one busy bar per cluster (fused clusters get
 * an X, never a bar) and beside it the NoC mesh as a heat map: every node
 * a box (CCB, DDR, C0..), every directed link between neighbours an arrow
 * with a load character from LOAD_RAMP (and a colour when the terminal
 * has them).  Below the devices, one row per client process.
 *
 * Mesh drawing, per node at (x, y), boxes 5 wide and 3 high:
 *
 *   +---+ #> +---+        east link of the left node: load char, '>'
 *   |CCB|    | C0|
 *   +---+ <# +---+        west link of the right node: '<', load char
 *   ^# #v                 north link of the node below, south link of this one
 *   +---+
 *
 * Only plain ASCII is drawn so it works on a serial console and in any
 * locale.
 */
#include <curses.h>
#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"

#define LOAD_RAMP	" .:-=+*#%@"
#define LOAD_LEVELS	10
#define BOX_W		5
#define BOX_H		3
#define GAP_W		4
#define GAP_H		1
#define MIN_BAR_PANE	36
#define MAX_BAR_PANE	56	/* wider bars only push the mesh out of sight */
#define TICK_MS		100	/* longest wait before checking nt_stop again */

enum { PAIR_LOW = 1, PAIR_MID, PAIR_HIGH, PAIR_TITLE };

struct tui {
	const struct nt_sources *src;
	double interval;
	enum nt_sort sort;
	bool paused, help, color, quit;
	int scroll;
	struct nt_snapshot *prev, *cur;
	struct nt_view *view;
	char status[128];
};

static bool curses_on;
/* Rows at and below this are not drawn (the process table's and status line's). */
static int clip_rows;

static void tui_end(void)
{
	if (curses_on) {
		curses_on = false;
		endwin();
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- drawing primitives ---- */

/* Print at (y, x), clipped to the screen instead of wrapping. */
static void put(int y, int x, attr_t attr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(int y, int x, attr_t attr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (y < 0 || y >= clip_rows || x < 0 || x >= COLS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	attron(attr);
	mvaddnstr(y, x, buf, COLS - x);
	attroff(attr);
}

static void putch(int y, int x, attr_t attr, char c)
{
	if (y < 0 || y >= clip_rows || x < 0 || x >= COLS)
		return;
	mvaddch(y, x, (chtype)(unsigned char)c | attr);
}

/* Colour (or, without colours, weight) for a utilization. */
static attr_t level_attr(const struct tui *t, double pct)
{
	if (!t->color)
		return pct >= 80 ? A_BOLD : 0;
	if (pct >= 80)
		return COLOR_PAIR(PAIR_HIGH) | A_BOLD;
	return COLOR_PAIR(pct >= 50 ? PAIR_MID : PAIR_LOW);
}

static attr_t title_attr(const struct tui *t)
{
	return (t->color ? COLOR_PAIR(PAIR_TITLE) : 0) | A_BOLD;
}

static char load_char(double pct)
{
	int i;

	if (pct <= 0)
		return LOAD_RAMP[0];
	/* Any traffic at all shows at least the faintest mark. */
	i = 1 + (int)(pct / 100.0 * (LOAD_LEVELS - 1));
	return LOAD_RAMP[i >= LOAD_LEVELS ? LOAD_LEVELS - 1 : i];
}

/* ---- per device ---- */

/* One cluster's bar: "C3  [|||||     ]  45.0%"; fused: "C0  X  fused". */
static void draw_bar(const struct tui *t, const struct nt_dev_view *dv, unsigned c, int y, int x,
		     int bw)
{
	int fill;
	attr_t a;

	put(y, x, A_BOLD, "C%-2u", c);
	if (nt_fused(dv->d) & (1u << c)) {
		put(y, x + 4, A_DIM, "X  fused");
		return;
	}
	putch(y, x + 4, 0, '[');
	putch(y, x + 5 + bw, 0, ']');
	if (!dv->cl_ok[c]) {
		put(y, x + 7 + bw, A_DIM, "    -");
		return;
	}
	fill = (int)(dv->cl_pct[c] / 100.0 * bw + 0.5);
	a = level_attr(t, dv->cl_pct[c]);
	for (int i = 0; i < fill && i < bw; i++)
		putch(y, x + 5 + i, a, '|');
	put(y, x + 7 + bw, a, "%5.1f%%", dv->cl_pct[c]);
}

/* Bar cell width for a bar of bw characters, and the bar for a cell. */
#define BAR_CELL(bw)	((bw) + 16)
#define CELL_BAR(w)	((w) - 16)

/* The bars, cols to a row, column-major so cluster numbers read downwards. */
static void draw_bars(const struct tui *t, const struct nt_dev_view *dv, int y, int x, int w,
		      int cols)
{
	unsigned n = dv->d->clusters, rows = (n + (unsigned)cols - 1) / (unsigned)cols;
	int bw = CELL_BAR(w / cols);

	if (bw > 50)
		bw = 50;
	if (bw < 5)
		bw = 5;
	if (!n)
		put(y, x, A_DIM, "no cluster counters");
	for (unsigned c = 0; c < n; c++)
		draw_bar(t, dv, c, y + (int)(c % rows), x + (int)(c / rows) * (w / cols), bw);
}

static int mesh_width(const struct nt_device *d)
{
	return (int)d->mesh_x * BOX_W + ((int)d->mesh_x - 1) * GAP_W;
}

static int mesh_height(const struct nt_device *d)
{
	return (int)d->mesh_y * BOX_H + ((int)d->mesh_y - 1) * GAP_H;
}

/* Rows the heat map pane needs: title, mesh, summary line. */
static int heat_rows(const struct nt_device *d)
{
	return d->mesh_x ? mesh_height(d) + 2 : 2;
}

static void draw_link(const struct tui *t, const struct nt_dev_view *dv, unsigned l, int y,
		      int x, char arrow, bool arrow_first)
{
	bool have = dv->links_ok;
	double pct = have ? dv->link_pct[l] : 0;
	attr_t a = have ? level_attr(t, pct) : A_DIM;

	if (have && dv->hot == (int)l)
		a |= A_REVERSE | A_BOLD;
	putch(y, arrow_first ? x : x + 1, have ? a : A_DIM, arrow);
	putch(y, arrow_first ? x + 1 : x, a, have ? load_char(pct) : ' ');
}

static void draw_node(const struct tui *t, const struct nt_dev_view *dv, unsigned node, int y,
		      int x)
{
	const struct nt_device *d = dv->d;
	int k = nt_node_kind(d, node);
	bool fused = k >= 0 && nt_fused(d) & (1u << k);
	attr_t frame = fused ? A_DIM : 0, label_attr = A_BOLD;
	char label[8];

	nt_node_label(d, node, label, sizeof(label));
	if (k == NT_NODE_CCB || k == NT_NODE_DDR)
		label_attr = title_attr(t);
	else if (k == NT_NODE_EMPTY || fused)
		label_attr = A_DIM;
	else if (dv->cl_ok[k])
		label_attr = level_attr(t, dv->cl_pct[k]) | A_BOLD;
	put(y, x, frame, fused ? "x---x" : "+---+");
	putch(y + 1, x, frame, fused ? 'x' : '|');
	put(y + 1, x + 1, label_attr, "%3s", label);
	putch(y + 1, x + 4, frame, fused ? 'x' : '|');
	put(y + 2, x, frame, fused ? "x---x" : "+---+");
}

/* One line on the links: the hottest one, or why there is none. */
static void draw_links_summary(const struct tui *t, const struct nt_dev_view *dv, int y, int x)
{
	const struct nt_device *d = dv->d;
	unsigned h = (unsigned)dv->hot;
	char from[8], to[8], text[64];

	if (!d->mesh_x) {
		put(y, x, A_DIM, "NoC: mesh geometry unknown");
		return;
	}
	if (!d->n_links) {
		put(y, x, A_DIM, "NoC: no link counters");
		return;
	}
	if (!dv->links_ok) {
		put(y, x, A_DIM, "NoC: waiting for a second sample");
		return;
	}
	if (dv->hot < 0) {
		put(y, x, 0, "NoC: links idle");
		return;
	}
	nt_node_label(d, h / NPU_HW_LINK_DIRS, from, sizeof(from));
	nt_node_label(d, (unsigned)nt_link_dest(d, h), to, sizeof(to));
	snprintf(text, sizeof(text), "hottest link: %s -> %s %s ", from, to,
		 nt_dir_name(h % NPU_HW_LINK_DIRS));
	put(y, x, 0, "%s", text);
	put(y, x + (int)strlen(text), level_attr(t, dv->link_pct[h]), "%.1f%%", dv->link_pct[h]);
}

static void draw_mesh(const struct tui *t, const struct nt_dev_view *dv, int y, int x)
{
	const struct nt_device *d = dv->d;

	if (!d->mesh_x) {
		draw_links_summary(t, dv, y, x);
		return;
	}
	put(y, x, A_BOLD, "NoC link load");
	put(y, x + 14, A_DIM, "0%%[%s]100%%", LOAD_RAMP);
	for (unsigned node = 0; node < d->mesh_x * d->mesh_y; node++) {
		unsigned nx = node % d->mesh_x, ny = node / d->mesh_x;
		int sy = y + 1 + (int)ny * (BOX_H + GAP_H), sx = x + (int)nx * (BOX_W + GAP_W);
		unsigned l = node * NPU_HW_LINK_DIRS;

		draw_node(t, dv, node, sy, sx);
		if (nx + 1 < d->mesh_x) {
			draw_link(t, dv, l + NPU_LINK_EAST, sy, sx + BOX_W + 1, '>', false);
			draw_link(t, dv, (node + 1) * NPU_HW_LINK_DIRS + NPU_LINK_WEST, sy + 2,
				  sx + BOX_W + 1, '<', true);
		}
		if (ny + 1 < d->mesh_y) {
			draw_link(t, dv, (node + d->mesh_x) * NPU_HW_LINK_DIRS + NPU_LINK_NORTH,
				  sy + BOX_H, sx, '^', true);
			draw_link(t, dv, l + NPU_LINK_SOUTH, sy + BOX_H, sx + 3, 'v', false);
		}
	}
	draw_links_summary(t, dv, y + 1 + mesh_height(d), x);
}

/*
 * Two layouts.  Full: one bar per row with the mesh beside (or below) it.
 * Compact, when the devices would not leave room for the process table:
 * bars in as many columns as fit and the hottest link on one line.
 */
enum layout { LAYOUT_FULL, LAYOUT_COMPACT };

static bool mesh_beside(const struct nt_device *d)
{
	return COLS >= MIN_BAR_PANE + 2 + (d->mesh_x ? mesh_width(d) : 0);
}

static int compact_cols(void)
{
	int cols = (COLS - 1) / BAR_CELL(12);

	return cols < 1 ? 1 : cols;
}

/* Rows draw_device uses, the blank line after it included. */
static int device_rows(const struct nt_dev_view *dv, enum layout layout)
{
	const struct nt_device *d = dv->d;
	int bars = d->clusters ? (int)d->clusters : 1;

	if (layout == LAYOUT_COMPACT)
		return 1 + (bars + compact_cols() - 1) / compact_cols() + 1 + 1;
	if (!d->mesh_x)
		return 1 + bars + 1 + 1;
	if (mesh_beside(d))
		return 1 + (bars > heat_rows(d) ? bars : heat_rows(d)) + 1;
	return 1 + bars + heat_rows(d) + 1;
}

static void draw_device_header(const struct tui *t, const struct nt_dev_view *dv, int y)
{
	const struct nt_device *d = dv->d;
	char line[256], buf[32];
	int len = 0, x;

	/* Name and busy first: they are what a narrow terminal must still show. */
	put(y, 0, title_attr(t), "%s", d->name);
	x = (int)strlen(d->name) + 2;
	if (dv->busy_ok)
		put(y, x, level_attr(t, dv->busy_pct) | A_BOLD, "busy %5.1f%%", dv->busy_pct);
	else
		put(y, x, A_DIM, "busy     -");
	x += 12;
	if (d->kind == NT_EMULATOR)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  emulator in %s",
				d->comm);
	else if (d->pdev[0])
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  pci %s", d->pdev);
	len += snprintf(line + len, sizeof(line) - (size_t)len, "  %u clusters x %u TPBs",
			d->clusters, d->tpbs);
	if (d->mesh_x)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  mesh %ux%u",
				d->mesh_x, d->mesh_y);
	if (d->clock_mhz)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  %u MHz", d->clock_mhz);
	if (dv->memory_ok) {
		nt_fmt_bytes(buf, sizeof(buf), dv->memory);
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  mem %s", buf);
	}
	if (d->has_resets)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  resets %llu",
				(unsigned long long)d->resets);
	if (d->has_jobs)
		snprintf(line + len, sizeof(line) - (size_t)len, "  jobs %llu",
			 (unsigned long long)d->jobs);
	put(y, x, 0, "%s", line);
}

static int draw_device(const struct tui *t, const struct nt_dev_view *dv, int y,
		       enum layout layout)
{
	const struct nt_device *d = dv->d;
	int bars_h = d->clusters ? (int)d->clusters : 1;
	int rows = device_rows(dv, layout);

	draw_device_header(t, dv, y++);
	if (layout == LAYOUT_COMPACT) {
		int cols = compact_cols();

		draw_bars(t, dv, y, 1, cols * BAR_CELL(12), cols);
		draw_links_summary(t, dv, y + (bars_h + cols - 1) / cols, 1);
	} else if (!d->mesh_x) {
		draw_bars(t, dv, y, 1, COLS - 1 < MAX_BAR_PANE ? COLS - 1 : MAX_BAR_PANE, 1);
		draw_links_summary(t, dv, y + bars_h, 1);
	} else if (mesh_beside(d)) {
		int bars_w = COLS - mesh_width(d) - 3;

		if (bars_w > MAX_BAR_PANE)
			bars_w = MAX_BAR_PANE;
		draw_bars(t, dv, y, 1, bars_w, 1);
		draw_mesh(t, dv, y, bars_w + 3);
	} else {
		draw_bars(t, dv, y, 1, COLS - 1, 1);
		draw_mesh(t, dv, y + bars_h, 1);
	}
	return y - 1 + rows;
}

/* ---- processes ---- */

static void draw_procs(struct tui *t, int y)
{
	const struct nt_view *v = t->view;
	int rows = LINES - 1 - (y + 1);
	attr_t head = A_REVERSE | A_BOLD;
	int max_scroll;

	if (y >= LINES - 1)
		return;
	put(y, 0, head, "%-*s", COLS, "");
	put(y, 0, head, "%7s %-15s %-10s %6s %4s %-14s %6s %10s", "PID", "NAME", "DEVICE",
	    "CLIENT", "CTX", "CLUSTERS", "BUSY%", "MEMORY");
	/* Mark the sort column. */
	if (t->sort == NT_SORT_PID)
		put(y, 0, head | A_UNDERLINE, "%7s", "PID");
	else if (t->sort == NT_SORT_BUSY)
		put(y, 62, head | A_UNDERLINE, "%6s", "BUSY%");
	else
		put(y, 69, head | A_UNDERLINE, "%10s", "MEMORY");
	y++;
	if (!v->n_proc) {
		put(y, 1, A_DIM, "no client processes visible (other users' need root)");
		return;
	}
	max_scroll = (int)v->n_proc - (rows > 0 ? rows : 0);
	if (t->scroll > max_scroll)
		t->scroll = max_scroll;
	if (t->scroll < 0)
		t->scroll = 0;
	for (int i = 0; i < rows && t->scroll + i < (int)v->n_proc; i++) {
		const struct nt_proc_view *pv = &v->proc[t->scroll + i];
		const struct nt_proc *p = pv->p;
		char client[24] = "-", ctx[16] = "-", cl[64] = "?", mem[24] = "-";

		if (p->has_client)
			snprintf(client, sizeof(client), "%llu", (unsigned long long)p->client_id);
		if (p->has_contexts)
			snprintf(ctx, sizeof(ctx), "%u", p->contexts);
		if (p->has_clusters)
			nt_fmt_mask(cl, sizeof(cl), p->clusters);
		if (p->has_memory)
			nt_fmt_bytes(mem, sizeof(mem), p->memory);
		put(y + i, 0, 0, "%7d %-15.15s %-10.10s %6s %4s %-14.14s", p->pid, p->comm,
		    v->dev[pv->dev].d->name, client, ctx, cl);
		if (pv->busy_ok)
			put(y + i, 62, level_attr(t, pv->busy_pct), "%6.1f", pv->busy_pct);
		else
			put(y + i, 62, A_DIM, "%6s", "-");
		put(y + i, 69, 0, "%10s", mem);
	}
}

/* ---- screen ---- */

static void draw_help(const struct tui *t)
{
	static const char *const lines[] = {
		"npu-top keys",
		"",
		"q        quit",
		"s        sort processes: busy, memory, pid",
		"p        pause / resume sampling",
		"d        type a new interval (seconds)",
		"+ / -    longer / shorter interval",
		"up/down  scroll the process list",
		"h or ?   this help (any key closes it)",
		"",
		"Cluster bars: busy % over the interval;",
		"X = fused cluster.  Mesh: link load",
		"0%[" LOAD_RAMP "]100% of 64 B/cycle,",
		"reversed = hottest link.",
	};
	int n = (int)(sizeof(lines) / sizeof(lines[0])), w = 48;
	int y0 = (LINES - n - 2) / 2, x0 = (COLS - w) / 2;

	if (y0 < 0)
		y0 = 0;
	if (x0 < 0)
		x0 = 0;
	for (int i = 0; i < n + 2; i++)
		put(y0 + i, x0, A_REVERSE, "%-*s", w, "");
	for (int i = 0; i < n; i++)
		put(y0 + 1 + i, x0 + 2, A_REVERSE | (i == 0 ? A_BOLD : 0), "%s", lines[i]);
	(void)t;
}

#define MIN_PROC_ROWS	6	/* process rows kept visible before devices go compact */

static void draw(struct tui *t)
{
	const struct nt_view *v = t->view;
	int proc_rows = 1 + (v->n_proc < MIN_PROC_ROWS ? (v->n_proc ? (int)v->n_proc : 1)
						       : MIN_PROC_ROWS);
	int dev_end = LINES - 1 - proc_rows, full = 0, y = 2;
	enum layout layout = LAYOUT_FULL;
	time_t now = time(NULL);
	char when[16] = "";
	struct tm tm;

	erase();
	clip_rows = LINES;
	if (localtime_r(&now, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	put(0, 0, A_BOLD, "npu-top");
	put(0, 8, 0, " %s  interval %.1f s  %u device%s  sort: %s", when, t->interval, v->n_dev,
	    v->n_dev == 1 ? "" : "s", nt_sort_name(t->sort));
	if (t->paused)
		put(0, COLS - 8, A_REVERSE | A_BOLD, " PAUSED ");
	if (!v->n_dev) {
		put(y, 1, A_BOLD, "no NPU found: no /dev/accel/accel* bound to npu and no emulator "
		    "running");
		y += 2;
	}
	for (unsigned i = 0; i < v->n_dev; i++)
		full += device_rows(&v->dev[i], LAYOUT_FULL);
	if (y + full > dev_end)
		layout = LAYOUT_COMPACT;
	/* Devices that still do not fit are cut off; the process table keeps its rows. */
	clip_rows = dev_end > y ? dev_end : y;
	for (unsigned i = 0; i < v->n_dev && y < clip_rows; i++)
		y = draw_device(t, &v->dev[i], y, layout);
	if (y > clip_rows)
		y = clip_rows;
	clip_rows = LINES - 1;
	draw_procs(t, y);
	clip_rows = LINES;
	if (t->status[0])
		put(LINES - 1, 0, A_BOLD, "%s", t->status);
	else
		put(LINES - 1, 0, A_DIM, "q quit  s sort  p pause  d/+/- interval  h help");
	if (t->help)
		draw_help(t);
	refresh();
}

/* ---- input ---- */

static void set_interval(struct tui *t, double v)
{
	if (v < NT_MIN_INTERVAL)
		v = NT_MIN_INTERVAL;
	if (v > NT_MAX_INTERVAL)
		v = NT_MAX_INTERVAL;
	t->interval = v;
	snprintf(t->status, sizeof(t->status), "interval %.1f s", v);
}

/* Steps of + and -: the usual refresh rates. */
static void step_interval(struct tui *t, int dir)
{
	static const double steps[] = { 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60 };
	int n = (int)(sizeof(steps) / sizeof(steps[0]));

	if (dir > 0) {
		for (int i = 0; i < n; i++)
			if (steps[i] > t->interval + 1e-9) {
				set_interval(t, steps[i]);
				return;
			}
		set_interval(t, t->interval);
	} else {
		for (int i = n - 1; i >= 0; i--)
			if (steps[i] < t->interval - 1e-9) {
				set_interval(t, steps[i]);
				return;
			}
		set_interval(t, NT_MIN_INTERVAL);
	}
}

/*
 * A small line editor on the status line, polling like the main loop so
 * a SIGTERM is still honoured while the user types.
 */
static void prompt_interval(struct tui *t)
{
	char buf[16] = "";
	size_t len = 0;
	double v;

	curs_set(1);
	timeout(TICK_MS);
	while (!nt_stop) {
		int ch;

		move(LINES - 1, 0);
		clrtoeol();
		put(LINES - 1, 0, A_BOLD, "interval in seconds (>= %.1f, Esc cancels): %s",
		    NT_MIN_INTERVAL, buf);
		refresh();
		ch = getch();
		if (ch == ERR || ch == KEY_RESIZE)
			continue;
		if (ch == 27) {
			t->status[0] = '\0';
			break;
		}
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
			if (nt_parse_interval(buf, &v) == 0)
				set_interval(t, v);
			else
				snprintf(t->status, sizeof(t->status), "bad interval '%s'", buf);
			break;
		}
		if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && len > 0)
			buf[--len] = '\0';
		else if (((ch >= '0' && ch <= '9') || ch == '.') && len + 1 < sizeof(buf))
			buf[len++] = (char)ch, buf[len] = '\0';
	}
	curs_set(0);
}

/* Returns true when the sampling schedule must restart. */
static bool handle_key(struct tui *t, int ch)
{
	double old = t->interval;

	/* Any key closes the help, but q still quits from it. */
	if (t->help && ch != KEY_RESIZE && ch != 'q' && ch != 'Q') {
		t->help = false;
		return false;
	}
	t->status[0] = '\0';
	switch (ch) {
	case 'q':
	case 'Q':
		t->quit = true;
		break;
	case 's':
	case 'S':
		t->sort = (enum nt_sort)((t->sort + 1) % NT_SORT_COUNT);
		nt_view_sort(t->view, t->sort);
		snprintf(t->status, sizeof(t->status), "sort by %s", nt_sort_name(t->sort));
		break;
	case 'p':
	case 'P':
	case ' ':
		t->paused = !t->paused;
		break;
	case 'h':
	case 'H':
	case '?':
		t->help = true;
		break;
	case 'd':
	case 'D':
		prompt_interval(t);
		break;
	case '+':
	case '=':
		step_interval(t, 1);
		break;
	case '-':
	case '_':
		step_interval(t, -1);
		break;
	case KEY_UP:
		t->scroll--;
		break;
	case KEY_DOWN:
		t->scroll++;
		break;
	case KEY_PPAGE:
		t->scroll -= LINES / 2;
		break;
	case KEY_NPAGE:
		t->scroll += LINES / 2;
		break;
	default:
		break;
	}
	return t->interval != old;
}

static void sample(struct tui *t)
{
	struct nt_snapshot *tmp;

	nt_snapshot_take(t->src, t->cur);
	nt_view_build(t->view, t->prev, t->cur, t->sort);
	/* The view points into cur; as prev it stays untouched until the next sample. */
	tmp = t->prev;
	t->prev = t->cur;
	t->cur = tmp;
}

int nt_tui_run(const struct nt_tui_opts *o, struct nt_snapshot *first)
{
	struct tui t = { .src = o->src, .interval = o->interval, .sort = o->sort };
	int64_t next;
	SCREEN *scr;
	bool dirty = true;

	t.prev = first;
	t.cur = malloc(sizeof(*t.cur));
	t.view = malloc(sizeof(*t.view));
	if (!t.cur || !t.view) {
		free(t.cur);
		free(t.view);
		fputs("npu-top: out of memory\n", stderr);
		return 1;
	}
	nt_view_build(t.view, NULL, first, t.sort);

	setlocale(LC_ALL, "");
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		free(t.cur);
		free(t.view);
		fprintf(stderr, "npu-top: cannot drive terminal '%s'; use --once or --json\n",
			getenv("TERM") ? getenv("TERM") : "");
		return 1;
	}
	curses_on = true;
	atexit(tui_end);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	if (has_colors() && !getenv("NO_COLOR")) {
		start_color();
		use_default_colors();
		init_pair(PAIR_LOW, COLOR_GREEN, -1);
		init_pair(PAIR_MID, COLOR_YELLOW, -1);
		init_pair(PAIR_HIGH, COLOR_RED, -1);
		init_pair(PAIR_TITLE, COLOR_CYAN, -1);
		t.color = true;
	}

	next = now_ms() + (int64_t)(t.interval * 1000);
	while (!nt_stop && !t.quit) {
		int64_t wait;
		int ch;

		if (dirty)
			draw(&t);
		dirty = false;
		wait = t.paused ? TICK_MS : next - now_ms();
		timeout(wait < 0 ? 0 : wait > TICK_MS ? TICK_MS : (int)wait);
		ch = getch();
		if (ch != ERR) {
			if (handle_key(&t, ch))
				next = now_ms() + (int64_t)(t.interval * 1000);
			dirty = true;
		}
		if (!t.paused && now_ms() >= next) {
			sample(&t);
			next += (int64_t)(t.interval * 1000);
			if (next < now_ms())	/* fell behind (slow /proc): do not burst */
				next = now_ms() + (int64_t)(t.interval * 1000);
			dirty = true;
		}
	}
	tui_end();
	delscreen(scr);
	free(t.cur == first ? t.prev : t.cur);
	free(t.view);
	return 0;
}
