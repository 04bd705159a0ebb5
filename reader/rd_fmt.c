/*
** rd_fmt.c — how single values are written: human-readable sizes, dates
** and durations for text, escaping for JSON, CSV and the terminal.
**
** Names in a snapshot are whatever the program registered or the loader
** reported, so they may hold any bytes.  JSON output must still be valid
** UTF-8: bytes that do not form valid UTF-8 become U+FFFD, controls are
** escaped.  Text output, CSV and every message show controls and invalid
** bytes as \xNN (\n, \t) through rd_text_str, so that a name stays on
** its line, columns stay aligned and no terminal escape reaches the
** terminal; CSV then quotes a field when it holds a comma, a quote or
** surrounding spaces (RFC 4180).
*/
#include "rd_int.h"
#include "meminst-size.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A size as meminst-size.h writes it (the runtime's status printout too). */
void rd_fmt_size(uint64_t v, char *buf, size_t len)
{
	meminst_fmt_size(snprintf, v, buf, len);
}

void rd_fmt_delta(int64_t v, char *buf, size_t len)
{
	uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char s[32];
	rd_fmt_size(mag, s, sizeof s);
	snprintf(buf, len, "%s%s", v < 0 ? "-" : v > 0 ? "+" : "", s);
}

void rd_fmt_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%lld ns", (long long)ns);
}

void rd_fmt_ms(int64_t ns, char *buf, size_t len)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(buf, len, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(mag / 1000000),
		 (unsigned long long)(mag % 1000000 / 1000));
}

/* Durations step ns -> µs -> ms -> s.  Alone, a value keeps three
** significant digits ("921 ns", "92.1 µs", "1.50 s"); in a column that is
** compared, every value takes the unit of the column's largest with three
** decimals (0 for ns), so that "0.921 ms" sits under "522.135 ms". */
static const char *const dur_unit[] = {"ns", "\xc2\xb5s", "ms", "s"};
static const uint64_t dur_scale[] = {1, 1000, 1000000, 1000000000};

int rd_dur_unit_of(uint64_t ns)
{
	int u = 0;
	while (u < 3 && ns >= dur_scale[u + 1])
		u++;
	return u;
}

void rd_fmt_dur_in(int64_t ns, int unit, char *buf, size_t len)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";
	if (unit <= 0) {
		snprintf(buf, len, "%s%llu ns", sign, (unsigned long long)mag);
		return;
	}
	uint64_t scale = dur_scale[unit], milli = scale / 1000;
	uint64_t whole = mag / scale, frac = (mag % scale + milli / 2) / milli;
	if (frac == 1000) { /* rounding carried into the whole part */
		whole++;
		frac = 0;
	}
	snprintf(buf, len, "%s%llu.%03llu %s", sign, (unsigned long long)whole,
		 (unsigned long long)frac, dur_unit[unit]);
}

void rd_fmt_dur(int64_t ns, char *buf, size_t len)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";
	int u = rd_dur_unit_of(mag);
	if (u == 0) {
		snprintf(buf, len, "%s%llu ns", sign, (unsigned long long)mag);
		return;
	}
	/* Round to three significant digits first: 999.6 µs is "1.00 ms". */
	double v = (double)mag / (double)dur_scale[u];
	int dec = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
	if (v >= 999.5 && u < 3) {
		u++;
		v = (double)mag / (double)dur_scale[u];
		dec = 2;
	}
	snprintf(buf, len, "%s%.*f %s", sign, dec, v, dur_unit[u]);
}

/* ---------------------------------------------------------------- UTF-8 -- */

static bool cont(unsigned char c) { return (c & 0xc0) == 0x80; }

/* Length of the valid UTF-8 sequence at s, or 0 if the bytes there are not
** one (overlong forms, surrogates and values past U+10FFFF included). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return cont(s[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return s[1] >= lo && s[1] <= hi && cont(s[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return s[1] >= lo && s[1] <= hi && cont(s[2]) && cont(s[3]) ? 4 : 0;
	}
	return 0;
}

void rd_json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	putc('"', f);
	while (*s) {
		size_t run = 0; /* plain ASCII goes out in one piece */
		while (s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
			run++;
		if (run) {
			fwrite(s, 1, run, f);
			s += run;
			continue;
		}
		size_t n = utf8_len(s);
		if (*s == '"' || *s == '\\') {
			fprintf(f, "\\%c", *s);
		} else if (*s < 0x20) {
			const char *e = *s == '\n' ? "\\n" : *s == '\t' ? "\\t" : *s == '\r' ? "\\r"
				      : *s == '\b' ? "\\b" : *s == '\f' ? "\\f" : NULL;
			if (e)
				fputs(e, f);
			else
				fprintf(f, "\\u%04x", *s);
		} else if (n == 0) {
			fputs("\\ufffd", f);
			n = 1;
		} else {
			fwrite(s, 1, n, f);
		}
		s += n ? n : 1;
	}
	putc('"', f);
}

/* s through rd_text_str, in buf when it fits, else in memory the caller
** frees when the result is not buf. */
static char *fmt_shown(const char *s, char *buf, size_t len)
{
	size_t need = 4 * strlen(s) + 8; /* \xNN per byte at most */
	char *out = need <= len ? buf : rd_xmalloc(need);
	rd_text_str(s, out, need <= len ? len : need, NULL);
	return out;
}

void rd_csv_str(FILE *f, const char *raw)
{
	char buf[512];
	char *shown = fmt_shown(raw, buf, sizeof buf);
	const char *s = shown;
	size_t n = strlen(s);
	bool quote = strpbrk(s, ",\"\r\n") != NULL || (n && (s[0] == ' ' || s[n - 1] == ' '));
	if (!quote) {
		fputs(s, f);
	} else {
		putc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				putc('"', f);
			putc(*s, f);
		}
		putc('"', f);
	}
	if (shown != buf)
		free(shown);
}

void rd_text_put(FILE *f, const char *s)
{
	char buf[512];
	char *shown = fmt_shown(s, buf, sizeof buf);
	fputs(shown, f);
	if (shown != buf)
		free(shown);
}

void rd_verrf(FILE *f, const char *fmt, va_list ap)
{
	char msg[1024], buf[1024];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(msg, sizeof msg, fmt, ap);
	char *m = msg;
	if (n >= (int)sizeof msg) { /* a long name: the whole of it */
		m = rd_xmalloc((size_t)n + 1);
		vsnprintf(m, (size_t)n + 1, fmt, again);
	}
	va_end(again);
	bool end = n > 0 && m[n - 1] == '\n';
	if (end)
		m[n - 1] = 0;
	char *shown = fmt_shown(m, buf, sizeof buf);
	fputs(shown, f);
	if (end)
		putc('\n', f);
	if (shown != buf)
		free(shown);
	if (m != msg)
		free(m);
}

void rd_errf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rd_verrf(f, fmt, ap);
	va_end(ap);
}

void rd_text_str(const char *str, char *buf, size_t len, size_t *width)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t o = 0, w = 0;
	while (*s && o + 5 < len) {
		size_t n = utf8_len(s);
		if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) /* a C1 control (U+009B is CSI) */
			n = 0;
		if (n == 0 || *s < 0x20 || *s == 0x7f) {
			const char *e = *s == '\n' ? "\\n" : *s == '\t' ? "\\t" : NULL;
			int k = e ? snprintf(buf + o, len - o, "%s", e)
				  : snprintf(buf + o, len - o, "\\x%02x", *s);
			o += (size_t)k;
			w += (size_t)k;
			s++;
			continue;
		}
		memcpy(buf + o, s, n);
		o += n;
		w++;
		s += n;
	}
	buf[o] = 0;
	if (width)
		*width = w;
}

size_t rd_text_width(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t w = 0;
	for (; *s; s++)
		w += !cont(*s);
	return w;
}

void rd_text_cut(char *buf, size_t *width, size_t max)
{
	if (*width <= max || max < 5)
		return;
	/* keep the head and the tail ("…+0x23 (module)" says which code),
	** dropping whole characters from the middle */
	size_t tail = (max - 1) / 2, head = max - 1 - tail, skip = *width - head - tail;
	size_t o = 0, i = 0, chars = 0;
	while (buf[i] && chars < head) { /* past the head */
		i++;
		while (cont((unsigned char)buf[i]))
			i++;
		chars++;
	}
	o = i;
	size_t j = i;
	for (size_t k = 0; k < skip && buf[j]; k++) {
		j++;
		while (cont((unsigned char)buf[j]))
			j++;
	}
	/* at least 2 characters are dropped (width > max): the tail moves
	** right by at most one byte, which the text buffers leave room for */
	memmove(buf + o + 3, buf + j, strlen(buf + j) + 1);
	memcpy(buf + o, "\xe2\x80\xa6", 3); /* … */
	*width = max;
}

void rd_fit_widths(size_t *wid, const bool *can_cut, int n, size_t width)
{
	enum { NARROWEST = 16 };
	size_t total = 0, shown = 0;
	for (int c = 0; c < n; c++)
		if (wid[c]) {
			total += wid[c];
			shown++;
		}
	total += shown > 1 ? 2 * (shown - 1) : 0;
	while (total > width) { /* the widest down to the next widest, and so on */
		int widest = -1;
		size_t next = NARROWEST;
		for (int c = 0; c < n; c++)
			if (can_cut[c] && wid[c] > NARROWEST && (widest < 0 || wid[c] > wid[widest]))
				widest = c;
		if (widest < 0)
			return; /* nothing left to narrow: the line stays long */
		for (int c = 0; c < n; c++)
			if (c != widest && can_cut[c] && wid[c] > next && wid[c] <= wid[widest])
				next = wid[c];
		size_t cut = total - width, room = wid[widest] > next ? wid[widest] - next : 1;
		cut = cut < room ? cut : room;
		wid[widest] -= cut;
		total -= cut;
	}
}

/* ---------------------------------------------------------------- stacks -- */

/* One part of a frame, its tabs and line breaks made spaces. */
static void stack_part(FILE *f, const char *s)
{
	for (; s && *s; s++)
		putc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
	putc('\t', f);
}

const char *rd_stack_add(struct rd_pool *p, const char *stack, const char *func, const char *file,
			   int line, const char *module, bool inlined)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	fputs(stack ? stack : "", f);
	stack_part(f, func);
	stack_part(f, file);
	fprintf(f, "%d\t", file ? line : 0);
	stack_part(f, module);
	fprintf(f, "%d\n", inlined);
	fclose(f);
	const char *r = rd_pool_str(p, buf);
	free(buf);
	return r;
}

bool rd_stack_next(const char **s, struct rd_stack_frame *fr)
{
	if (!*s || !**s)
		return false;
	char *parts[3] = {fr->func, fr->file, fr->module};
	size_t cap[3] = {sizeof fr->func, sizeof fr->file, sizeof fr->module};
	const char *q = *s;
	for (int i = 0, k = 0; i < 5; i++) {
		size_t n = strcspn(q, i == 4 ? "\n" : "\t");
		if (i == 2 || i == 4) {
			long v = strtol(q, NULL, 10);
			if (i == 2)
				fr->line = (int)v;
			else
				fr->inlined = v != 0;
		} else {
			snprintf(parts[k], cap[k], "%.*s", (int)n, q);
			k++;
		}
		q += n + (q[n] != 0);
	}
	*s = q;
	return true;
}

/* "func at file:line (module, inlined)": one frame on one line. */
static void stack_one(const struct rd_stack_frame *fr, char *buf, size_t len)
{
	char at[600] = "";
	if (fr->file[0])
		snprintf(at, sizeof at, " at %s:%d", fr->file, fr->line);
	snprintf(buf, len, "%s%s (%s%s)", fr->func[0] ? fr->func : "??", at, fr->module[0] ? fr->module : "??",
		 fr->inlined ? ", inlined" : "");
}

void rd_stack_text(FILE *f, const char *stack, size_t width)
{
	struct rd_stack_frame fr;
	char one[1400], shown[1500];
	size_t w;
	for (bool first = true; rd_stack_next(&stack, &fr); first = false) {
		stack_one(&fr, one, sizeof one);
		rd_text_str(one, shown, sizeof shown, &w);
		if (width > 10)
			rd_text_cut(shown, &w, width - 7);
		fprintf(f, "    %s %s\n", first ? "  " : "<-", shown);
	}
}

void rd_stack_json(FILE *f, const char *stack)
{
	struct rd_stack_frame fr;
	putc('[', f);
	for (bool first = true; rd_stack_next(&stack, &fr); first = false) {
		fputs(first ? "{\"function\": " : ", {\"function\": ", f);
		rd_json_str(f, fr.func[0] ? fr.func : "??");
		fputs(", \"file\": ", f);
		if (fr.file[0])
			rd_json_str(f, fr.file), fprintf(f, ", \"line\": %d", fr.line);
		else
			fputs("null, \"line\": null", f);
		fputs(", \"module\": ", f);
		rd_json_str(f, fr.module);
		fprintf(f, ", \"inlined\": %s}", fr.inlined ? "true" : "false");
	}
	putc(']', f);
}

void rd_stack_csv(FILE *f, const char *stack)
{
	struct rd_stack_frame fr;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		abort();
	char one[1400];
	for (bool first = true; rd_stack_next(&stack, &fr); first = false) {
		stack_one(&fr, one, sizeof one);
		fprintf(m, "%s%s", first ? "" : " <- ", one);
	}
	fclose(m);
	rd_csv_str(f, buf);
	free(buf);
}

bool rd_stack_row(const struct rd_args *a, size_t row, size_t dflt)
{
	if (a->stacks >= 0)
		return row < (size_t)a->stacks;
	return a->format != RD_FMT_TEXT || row < dflt;
}
