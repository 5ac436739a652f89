// SPDX-License-Identifier: MIT
/*
 * rdmakit top's live screen (ncurses): a header, the ports table and a
 * detail view of one port with every counter, its rate and a sparkline of
 * the last minute.  Redraws with erase()+refresh(), so ncurses sends only
 * what changed (no flicker); follows resizes (KEY_RESIZE); gives the
 * terminal back on q, on -n, on Ctrl-C/SIGTERM and on errors (endwin from
 * the loop, and from atexit for any other exit).
 */
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "top.h"

#define KEY_ESC 27
#define MIN_COLS 40
#define MIN_LINES 8

static const double intervals[] = { 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60 };
#define NINTERVALS (sizeof(intervals) / sizeof(intervals[0]))

struct tui {
	struct top_state *st;
	size_t *order;		/* ports in display order */
	size_t norder;
	int sel;		/* index into order */
	int scroll;		/* first row shown */
	int detail_scroll;
	enum top_col sort;	/* TOP_COL_PORT: by name */
	bool totals, paused, detail, help, color, utf8;
	bool resched;		/* the interval changed: time the next sample anew */
	double delay;
	char sel_name[80];	/* the selected port, kept across samples */
	const char *error;	/* why the loop stopped, for the caller */
};

static bool screen_up;

/* Whatever ends the process, the terminal is given back. */
static void restore_terminal(void)
{
	if (screen_up && !isendwin())
		endwin();
	screen_up = false;
}

/* --- ordering ------------------------------------------------------------------- */

static struct tui *sort_ctx;

static int order_cmp(const void *a, const void *b)
{
	const struct ctr_port *x = &sort_ctx->st->cur.ports[*(const size_t *)a];
	const struct ctr_port *y = &sort_ctx->st->cur.ports[*(const size_t *)b];

	if (sort_ctx->sort != TOP_COL_PORT) {
		double vx = top_sort_value(x, sort_ctx->sort, sort_ctx->totals);
		double vy = top_sort_value(y, sort_ctx->sort, sort_ctx->totals);

		if (vx != vy)
			return vx > vy ? -1 : 1;
	}
	return ctr_port_order(x, y);
}

static void reorder(struct tui *t)
{
	const struct ctr_snapshot *s = &t->st->cur;
	size_t *o = realloc(t->order, (s->nports ? s->nports : 1) * sizeof(*o));

	if (!o)
		return;
	t->order = o;
	t->norder = s->nports;
	for (size_t i = 0; i < s->nports; i++)
		o[i] = i;
	sort_ctx = t;
	qsort(o, t->norder, sizeof(*o), order_cmp);
	/* Keep the same port selected when rows move. */
	t->sel = t->sel < (int)t->norder ? t->sel : (int)t->norder - 1;
	for (size_t i = 0; t->sel_name[0] && i < t->norder; i++) {
		char name[80];

		top_port_name(&s->ports[o[i]], name, sizeof(name));
		if (!strcmp(name, t->sel_name)) {
			t->sel = (int)i;
			break;
		}
	}
	if (t->sel < 0)
		t->sel = 0;
}

static const struct ctr_port *selected(const struct tui *t)
{
	return t->norder ? &t->st->cur.ports[t->order[t->sel]] : NULL;
}

static void remember_selection(struct tui *t)
{
	const struct ctr_port *p = selected(t);

	t->sel_name[0] = '\0';
	if (p)
		top_port_name(p, t->sel_name, sizeof(t->sel_name));
}

/* --- drawing ---------------------------------------------------------------------- */

/* Writes s at (y, x), cut at the right edge. */
static void put(int y, int x, const char *s)
{
	if (y < 0 || y >= LINES || x >= COLS)
		return;
	mvaddnstr(y, x, s, COLS - x);
}

static void bar(int y, const char *s)
{
	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	put(y, 0, s);
	attroff(A_REVERSE);
}

static void draw_header(const struct tui *t)
{
	const struct ctr_snapshot *s = &t->st->cur;
	char line[512], ecn[256], when[16], pfc[48] = "";
	struct tm tm;
	size_t rdma = 0, with_pfc = 0;
	struct ctr_pfc f;

	localtime_r(&s->wall.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	snprintf(line, sizeof(line), " rdmakit top - %s - %s - every %gs - %s%s", t->st->host, when,
		 t->delay, t->totals ? "totals" : "rates/s", t->paused ? " - PAUSED" : "");
	bar(0, line);
	for (size_t i = 0; i < s->nports; i++) {
		const struct ctr_port *p = &s->ports[i];

		if (!p->device[0])
			continue;
		rdma++;
		/* DCB answers for every priority: count ports with PFC enabled. */
		with_pfc += ctr_port_pfc(p, &f) && (strcmp(f.source, "dcb") || p->pfc_en);
	}
	if (with_pfc)
		snprintf(pfc, sizeof(pfc), " (PFC on %zu)", with_pfc);
	top_ecn_line(s, t->totals, ecn, sizeof(ecn));
	snprintf(line, sizeof(line), " %zu RDMA device%s, %zu port%s%s%s%s", s->rdma_devices,
		 s->rdma_devices == 1 ? "" : "s", rdma, rdma == 1 ? "" : "s", pfc,
		 ecn[0] ? "; host ECN " : "; no host ECN counters", ecn);
	put(1, 0, line);
}

static void draw_footer(const struct tui *t)
{
	char line[256];

	if (t->detail)
		snprintf(line, sizeof(line), " Esc back  j/k scroll  d %s  p %s  +/- interval  h help  q quit",
			 t->totals ? "rates" : "totals", t->paused ? "resume" : "pause");
	else
		snprintf(line, sizeof(line), " q quit  j/k select  Enter detail  s sort:%s  d %s  p %s  "
			 "+/- interval  h help", t->sort == TOP_COL_PORT ? "name" :
			 t->totals ? top_col(t->sort)->total_head : top_col(t->sort)->rate_head,
			 t->totals ? "rates" : "totals",
			 t->paused ? "resume" : "pause");
	bar(LINES - 1, line);
}

/* Which columns fit: by priority, shown in table order. */
static int fit_columns(int port_w, bool show[TOP_COL_COUNT], int width[TOP_COL_COUNT])
{
	int used = 0;

	for (int c = 0; c < TOP_COL_COUNT; c++) {
		show[c] = false;
		width[c] = c == TOP_COL_PORT ? port_w : top_col((enum top_col)c)->width;
	}
	for (int prio = 0; prio < TOP_COL_COUNT; prio++) {
		for (int c = 0; c < TOP_COL_COUNT; c++) {
			int need;

			if (top_col((enum top_col)c)->priority != prio)
				continue;
			need = width[c] + (used ? 1 : 0);
			if (used + need <= COLS) {
				show[c] = true;
				used += need;
			}
		}
	}
	return used;
}

static void draw_message(int y, const char *msg)
{
	int w = COLS - 2;

	/* Word-wrapped. */
	while (*msg && y < LINES - 1) {
		int n = (int)strlen(msg), cut = n;

		if (n > w) {
			cut = w;
			while (cut > 0 && msg[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = w;
		}
		mvaddnstr(y++, 1, msg, cut);
		msg += cut;
		while (*msg == ' ')
			msg++;
	}
}

static void draw_table(struct tui *t)
{
	const struct ctr_snapshot *s = &t->st->cur;
	bool show[TOP_COL_COUNT];
	int width[TOP_COL_COUNT], port_w = 4, rows = LINES - 4, x;
	char msg[512];

	top_nothing_message(t->st, msg, sizeof(msg));
	for (size_t i = 0; i < s->nports; i++) {
		char name[80];

		top_port_name(&s->ports[i], name, sizeof(name));
		if ((int)strlen(name) > port_w)
			port_w = (int)strlen(name) > 16 ? 16 : (int)strlen(name);
	}
	fit_columns(port_w, show, width);
	attron(A_BOLD);
	x = 0;
	for (int c = 0; c < TOP_COL_COUNT; c++) {
		const struct top_col_info *ci = top_col((enum top_col)c);

		if (!show[c])
			continue;
		if (c == (int)t->sort)
			attron(A_UNDERLINE);
		mvprintw(2, x, ci->left ? "%-*.*s" : "%*.*s", width[c], width[c],
			 t->totals ? ci->total_head : ci->rate_head);
		attroff(A_UNDERLINE);
		x += width[c] + 1;
	}
	attroff(A_BOLD);
	if (t->sel < t->scroll)
		t->scroll = t->sel;
	if (t->sel >= t->scroll + rows)
		t->scroll = t->sel - rows + 1;
	for (int r = 0; r < rows && t->scroll + r < (int)t->norder; r++) {
		const struct ctr_port *p = &s->ports[t->order[t->scroll + r]];
		bool is_sel = t->scroll + r == t->sel;

		if (is_sel) {
			attron(A_REVERSE);
			mvhline(3 + r, 0, ' ', COLS);
		}
		x = 0;
		for (int c = 0; c < TOP_COL_COUNT; c++) {
			const struct top_col_info *ci = top_col((enum top_col)c);
			char cell[48];
			bool hot;

			if (!show[c])
				continue;
			top_cell(p, (enum top_col)c, t->totals, cell, sizeof(cell), &hot);
			if (hot)
				attron(A_BOLD | (t->color ? COLOR_PAIR(1) : 0));
			mvprintw(3 + r, x, ci->left ? "%-*.*s" : "%*.*s", width[c], width[c], cell);
			if (hot)
				attroff(A_BOLD | (t->color ? COLOR_PAIR(1) : 0));
			x += width[c] + 1;
		}
		if (is_sel)
			attroff(A_REVERSE);
	}
	/* The soft engines running here, one line each, under the ports. */
	x = 3 + (t->norder < (size_t)rows ? (int)t->norder : rows) + (t->norder ? 1 : 0);
	for (size_t i = 0; i < s->nengines && x < LINES - 1; i++, x++) {
		char line[512];

		top_engine_line(&s->engines[i], t->totals, line, sizeof(line));
		mvaddnstr(x, 1, line, COLS - 2);
	}
	if (msg[0])
		draw_message(x + (s->nengines ? 1 : 0), msg);
}

static const char *src_short(enum ctr_src src)
{
	switch (src) {
	case CTR_SRC_PMA: return "pma";
	case CTR_SRC_HW_PORT: return "hw";
	case CTR_SRC_HW_DEV: return "dev hw";
	case CTR_SRC_NETDEV: return "netdev";
	case CTR_SRC_ETHTOOL: return "ethtool";
	default: return ctr_src_name(src);
	}
}

/* A sparkline of a counter's recent rates, `w` cells wide. */
static void sparkline(const struct tui *t, const struct ctr_counter *c, int y, int x, int w)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char ascii[] = "_.-:=+*#";
	float v[CTR_HIST_LEN];
	size_t want = (size_t)ceil(60.0 / t->delay), n;
	float max = 0;

	if (w <= 0)
		return;
	if (want > (size_t)w)
		want = (size_t)w;
	if (want > CTR_HIST_LEN)
		want = CTR_HIST_LEN;
	n = ctr_hist_get(c->hist, v, want);
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]) && v[i] > max)
			max = v[i];
	move(y, x + (int)(want - n));
	for (size_t i = 0; i < n; i++) {
		int level = isnan(v[i]) || max <= 0 ? 0 : (int)(v[i] / max * 7.0f + 0.5f);

		if (isnan(v[i]))
			addch(' ');
		else if (t->utf8)
			addstr(bars[level]);
		else
			addch((chtype)(unsigned char)ascii[level]);
	}
}

static void draw_detail(struct tui *t)
{
	const struct ctr_port *p = selected(t);
	int name_w = 20, rows, y = 4;
	char line[512], name[80];
	struct ctr_pfc pfc;

	if (!p) {
		t->detail = false;
		draw_table(t);
		return;
	}
	top_port_name(p, name, sizeof(name));
	snprintf(line, sizeof(line), " %s  netdev %s  %s%s%s%s  %s  %g Gb/s", name,
		 p->netdev[0] ? p->netdev : "-", p->state[0] ? p->state : "-",
		 p->phys_state[0] ? " (" : "", p->phys_state, p->phys_state[0] ? ")" : "",
		 p->link_layer[0] ? p->link_layer : "-", p->rate_gbps);
	attron(A_BOLD);
	put(2, 0, line);
	attroff(A_BOLD);
	if (ctr_port_pfc(p, &pfc)) {
		size_t len = (size_t)snprintf(line, sizeof(line), " PFC pause rx/tx%s (%s):",
					      t->totals ? "" : " per s", pfc.source);

		for (int i = 0; i < CTR_PFC_PRIOS && len < sizeof(line); i++) {
			char a[16], b[16];

			if (!((pfc.rx_known | pfc.tx_known) & (1u << i)))
				continue;
			/* DCB counts all eight: show the enabled and the moving ones. */
			if (!strcmp(pfc.source, "dcb") && !(p->pfc_en & (1u << i)) &&
			    !pfc.rx[i] && !pfc.tx[i])
				continue;
			top_si(t->totals ? (double)pfc.rx[i] : pfc.rx_rate[i], a, sizeof(a));
			top_si(t->totals ? (double)pfc.tx[i] : pfc.tx_rate[i], b, sizeof(b));
			len += (size_t)snprintf(line + len, sizeof(line) - len, " prio%d %s/%s", i, a, b);
		}
	} else {
		const char *why = p->dcb_error[0] ? p->dcb_error : p->ethtool_error;

		snprintf(line, sizeof(line), " PFC: no per-priority pause counters%s%s",
			 why[0] ? " (" : "", why);
		if (why[0])
			strncat(line, ")", sizeof(line) - strlen(line) - 1);
	}
	if (p->pause_known) {
		size_t len = strlen(line);

		snprintf(line + len, sizeof(line) - len, "  | pause autoneg %s rx %s tx %s",
			 p->pause_autoneg ? "on" : "off", p->pause_rx ? "on" : "off",
			 p->pause_tx ? "on" : "off");
	}
	put(3, 0, line);
	for (size_t i = 0; i < p->set.n; i++)
		if ((int)strlen(p->set.c[i].name) > name_w)
			name_w = (int)strlen(p->set.c[i].name);
	if (name_w > COLS / 2 - 8)
		name_w = COLS / 2 - 8;
	attron(A_BOLD);
	mvprintw(y, 0, "%-*.*s %-8s %14s %7s  %s", name_w, name_w, "counter", "source", "value",
		 t->totals ? "" : "rate/s", "last minute");
	attroff(A_BOLD);
	rows = LINES - y - 2;
	if (t->detail_scroll > (int)p->set.n - rows)
		t->detail_scroll = (int)p->set.n - rows;
	if (t->detail_scroll < 0)
		t->detail_scroll = 0;
	for (int r = 0; r < rows && t->detail_scroll + r < (int)p->set.n; r++) {
		const struct ctr_counter *c = &p->set.c[t->detail_scroll + r];
		bool hot = ctr_name_is_error(c->name) || ctr_meaning_is_error((enum ctr_meaning)c->meaning);
		char rate[16];
		int x = name_w + 1 + 8 + 1 + 14 + 1 + 7 + 2;

		hot = hot && (t->totals ? c->value > 0 : c->rate > 0);
		top_rate_text(c, rate, sizeof(rate));
		if (hot)
			attron(A_BOLD | (t->color ? COLOR_PAIR(1) : 0));
		mvprintw(y + 1 + r, 0, "%-*.*s %-8.8s %14llu %7s", name_w, name_w, c->name,
			 src_short((enum ctr_src)c->src), (unsigned long long)c->value,
			 t->totals ? "" : rate);
		if (hot)
			attroff(A_BOLD | (t->color ? COLOR_PAIR(1) : 0));
		sparkline(t, c, y + 1 + r, x, COLS - x - 1);
	}
}

static void draw_help(void)
{
	static const char *const lines[] = {
		"rdmakit top keys",
		"",
		"q           quit",
		"Up/Down j/k select a port (scroll in details)",
		"Enter       details: every counter, rate, last minute",
		"Esc/Left    back to the ports table",
		"s           sort by the next column (descending)",
		"d           rates per second / totals",
		"p           pause / resume sampling",
		"+ / -       longer / shorter interval",
		"h ?         this help; any key closes it",
		"",
		"rx/tx Gb/s, Mpps: port traffic; pause r/t: PFC pause",
		"frames rx/tx (all priorities); ecn: CE-marked RoCE rx;",
		"cnp_tx/cnp_rx: CNPs sent/handled; oos: out of sequence;",
		"seqerr: NAK sequence errors; tmo: ACK timeouts; rnr: RNR",
	};
	int n = (int)(sizeof(lines) / sizeof(lines[0])), w = 58;
	int y0 = (LINES - n - 2) / 2, x0 = (COLS - w) / 2;

	if (y0 < 0)
		y0 = 0;
	if (x0 < 0)
		x0 = 0;
	for (int i = 0; i < n + 2 && y0 + i < LINES; i++) {
		attron(A_REVERSE);
		mvhline(y0 + i, x0, ' ', w < COLS ? w : COLS);
		if (i > 0 && i <= n)
			mvaddnstr(y0 + i, x0 + 2, lines[i - 1], COLS - x0 - 2);
		attroff(A_REVERSE);
	}
}

static void draw(struct tui *t)
{
	erase();
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		mvprintw(0, 0, "terminal too small (%dx%d): rdmakit top needs %dx%d", COLS, LINES,
			 MIN_COLS, MIN_LINES);
		refresh();
		return;
	}
	draw_header(t);
	if (t->detail)
		draw_detail(t);
	else
		draw_table(t);
	draw_footer(t);
	if (t->help)
		draw_help();
	refresh();
}

/* --- keys ---------------------------------------------------------------------------- */

static void step_interval(struct tui *t, int dir)
{
	size_t i = 0;

	while (i + 1 < NINTERVALS && intervals[i] < t->delay - 1e-9)
		i++;
	if (dir > 0) {
		if (intervals[i] <= t->delay + 1e-9 && i + 1 < NINTERVALS)
			i++;
	} else if (i > 0) {
		i--;
	}
	t->delay = intervals[i];
}

/* The sort order `s` steps through: name, then the numbers that matter most. */
static void next_sort(struct tui *t)
{
	static const enum top_col cycle[] = {
		TOP_COL_PORT, TOP_COL_RX, TOP_COL_TX, TOP_COL_ECN, TOP_COL_CNP_SENT,
		TOP_COL_CNP_HANDLED, TOP_COL_OOS, TOP_COL_SEQ_ERR, TOP_COL_TIMEOUT, TOP_COL_PAUSE,
		TOP_COL_RX_PKTS, TOP_COL_TX_PKTS, TOP_COL_RNR, TOP_COL_SPEED,
	};
	size_t n = sizeof(cycle) / sizeof(cycle[0]), i = 0;

	while (i < n && cycle[i] != t->sort)
		i++;
	t->sort = cycle[(i + 1) % n];
}

/* Handles a key; false to quit. */
static bool key(struct tui *t, int ch)
{
	if (t->help) {
		t->help = false;
		return ch != 'q';
	}
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case KEY_UP:
	case 'k':
		if (t->detail)
			t->detail_scroll--;
		else if (t->sel > 0)
			t->sel--;
		break;
	case KEY_DOWN:
	case 'j':
		if (t->detail)
			t->detail_scroll++;
		else if (t->sel + 1 < (int)t->norder)
			t->sel++;
		break;
	case KEY_NPAGE:
		t->detail_scroll += LINES - 6;
		break;
	case KEY_PPAGE:
		t->detail_scroll -= LINES - 6;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
	case KEY_RIGHT:
		if (t->detail && ch != KEY_RIGHT) {
			t->detail = false;
		} else if (t->norder) {
			t->detail = true;
			t->detail_scroll = 0;
		}
		break;
	case KEY_ESC:
	case KEY_LEFT:
	case KEY_BACKSPACE:
	case 127:
		t->detail = false;
		break;
	case 's':
		next_sort(t);
		break;
	case 'd':
		t->totals = !t->totals;
		break;
	case 'p':
	case ' ':
		t->paused = !t->paused;
		break;
	case '+':
	case '=':
		step_interval(t, 1);
		t->resched = true;
		break;
	case '-':
	case '_':
		step_interval(t, -1);
		t->resched = true;
		break;
	case 'h':
	case '?':
		t->help = true;
		break;
	default:
		break;
	}
	remember_selection(t);
	reorder(t);
	return true;
}

/* --- the loop --------------------------------------------------------------------------- */

static bool start_screen(struct tui *t)
{
	const char *cs;

	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	t->utf8 = cs && !strcmp(cs, "UTF-8");
	/* Before newterm: ncurses then leaves our SIGINT/SIGTERM handlers be. */
	cmd_catch_stop(true);
	if (!newterm(NULL, stdout, stdin))
		return false;
	screen_up = true;
	atexit(restore_terminal);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	if (has_colors() && start_color() == OK) {
		use_default_colors();
		init_pair(1, COLOR_RED, -1);
		t->color = true;
	}
	return true;
}

int top_tui(struct top_state *st)
{
	struct tui t = { .st = st, .delay = st->o->delay_s, .totals = st->o->totals };
	uint64_t next, start_samples = st->samples;
	int rc = EXIT_OK;

	if (!start_screen(&t)) {
		const char *term = getenv("TERM");

		return runtime_error("top", "cannot use the terminal (TERM=%s); set TERM, or use -b "
				     "for text output", term ? term : "unset");
	}
	reorder(&t);
	remember_selection(&t);
	next = top_now_ns() + (uint64_t)(t.delay * 1e9);
	while (!cmd_stop) {
		uint64_t now;
		int ch, wait_ms;

		draw(&t);
		now = top_now_ns();
		wait_ms = t.paused || now >= next ? 200 : (int)((next - now) / 1000000) + 1;
		timeout(wait_ms > 200 ? 200 : wait_ms);	/* look at signals often */
		ch = getch();
		if (cmd_stop)
			break;
		if (ch != ERR && ch != KEY_RESIZE && !key(&t, ch))
			break;
		now = top_now_ns();
		if (t.resched) {
			next = st->cur.mono_ns + (uint64_t)(t.delay * 1e9);
			t.resched = false;
		}
		if (t.paused || now < next)
			continue;
		if (top_sample(st) < 0) {
			restore_terminal();
			rc = runtime_error("top", "%s", st->err);
			break;
		}
		reorder(&t);
		next += (uint64_t)(t.delay * 1e9);
		if (next < now)
			next = now + (uint64_t)(t.delay * 1e9);
		if (st->o->iterations && st->samples - start_samples >= st->o->iterations)
			break;
	}
	restore_terminal();
	free(t.order);
	return rc;
}
