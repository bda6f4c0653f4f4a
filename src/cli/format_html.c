/*
 * `history --format html`: one self-contained HTML page (inline CSS and SVG, one small inline
 * script that counts the marks; no network, no external file) with a timeline of the history:
 * versions over time (x: commit time), rows and size as two lines, one mark per version
 * coloured by operation kind, tags labelled, cleaned-up ranges and gaps shaded, a hover title
 * (<title>) on every mark.
 *
 * Invariants: the rows are streamed (lv_history_each) into at most HTML_BINS bins: while the
 * history fits, a bin is one version (one mark per version); past that, adjacent bins are
 * merged pairwise and each later bin takes twice as many versions, so memory and the page's
 * size stay bounded for any history (a 10-million-version page has at most HTML_BINS marks,
 * each saying which versions it summarises).  Tags (HTML_TAGS), cleaned-up runs and gaps
 * (HTML_RANGES each) are bounded too; what is dropped past the bound is counted on the page.
 * Every text from disk is HTML-escaped.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define HTML_BINS 2000
#define HTML_TAGS 200
#define HTML_RANGES 256

typedef struct bin {
	uint64_t v0, v1, n;     /* versions v0..v1, n of them */
	int64_t t0, t1;         /* first and last commit time */
	uint64_t rows, size;    /* of the last version */
	uint64_t cleaned;       /* how many are cleaned up */
	char op[24];            /* the first version's operation ("mixed" when they differ) */
} bin;

typedef struct range { uint64_t v0, v1; int64_t t0, t1; } range;
typedef struct tagmark { uint64_t v; int64_t t; char name[48]; } tagmark;

typedef struct html {
	bin *bins;
	size_t nbins;
	uint64_t per_bin; /* versions a new bin may hold */
	range cleaned[HTML_RANGES], gaps[HTML_RANGES];
	size_t ncleaned, ngaps;
	uint64_t more_cleaned, more_gaps, more_tags, total;
	tagmark tags[HTML_TAGS];
	size_t ntags;
	int64_t last_t;
	bool have_last;
	lvcli_refctx *refs;
	const lvcli_select *sel;
} html;

static void merge(bin *a, const bin *b)
{
	a->v1 = b->v1;
	a->n += b->n;
	a->t1 = b->t1;
	a->rows = b->rows;
	a->size = b->size;
	a->cleaned += b->cleaned;
	if (strcmp(a->op, b->op))
		snprintf(a->op, sizeof a->op, "mixed");
}

static void add_range(range *r, size_t *n, uint64_t *more, uint64_t v0, uint64_t v1, int64_t t0, int64_t t1)
{
	if (*n && r[*n - 1].v1 + 1 == v0) { /* extends the last run */
		r[*n - 1].v1 = v1;
		r[*n - 1].t1 = t1;
	} else if (*n < HTML_RANGES) {
		r[(*n)++] = (range){ v0, v1, t0, t1 };
	} else {
		(*more)++;
	}
}

static int on_row(const lv_version_info *v, void *payload)
{
	html *h = payload;
	if (h->sel && !lvcli_select_keep(h->sel, v))
		return 0;
	h->total++;
	h->last_t = v->timestamp_millis;
	h->have_last = true;
	if (v->is_cleaned_up)
		add_range(h->cleaned, &h->ncleaned, &h->more_cleaned, v->version, v->version,
			  v->timestamp_millis, v->timestamp_millis);
	const char *names[4];
	size_t nt = v->is_tagged ? lvcli_tags_of(h->refs, v, names, 4) : 0;
	for (size_t i = 0; i < nt; i++) {
		if (h->ntags == HTML_TAGS) {
			h->more_tags++;
			continue;
		}
		tagmark *t = &h->tags[h->ntags++];
		t->v = v->version;
		t->t = v->timestamp_millis;
		snprintf(t->name, sizeof t->name, "%s", names[i]);
	}
	bin b = { v->version, v->version, 1, v->timestamp_millis, v->timestamp_millis,
		  v->total_rows, v->total_files_size, v->is_cleaned_up, "" };
	snprintf(b.op, sizeof b.op, "%s", v->operation_type ? v->operation_type : "unknown");
	if (h->nbins && h->bins[h->nbins - 1].n < h->per_bin) {
		merge(&h->bins[h->nbins - 1], &b);
		return 0;
	}
	if (h->nbins == HTML_BINS) { /* full: halve the bins, each new one takes twice as many */
		for (size_t i = 0; i < HTML_BINS / 2; i++) {
			h->bins[i] = h->bins[2 * i];
			merge(&h->bins[i], &h->bins[2 * i + 1]);
		}
		h->nbins = HTML_BINS / 2;
		h->per_bin *= 2;
		if (h->bins[h->nbins - 1].n < h->per_bin) {
			merge(&h->bins[h->nbins - 1], &b);
			return 0;
		}
	}
	h->bins[h->nbins++] = b;
	return 0;
}

static int on_gap(uint64_t first, uint64_t last, void *payload)
{
	html *h = payload;
	int64_t t = h->have_last ? h->last_t : 0;
	add_range(h->gaps, &h->ngaps, &h->more_gaps, first, last, t, t);
	return 0;
}

/* ---- the page ---- */

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s < 0x20)
				fputc(' ', f);
			else
				fputc(*s, f);
		}
	}
}

/* A class name from an operation: letters and digits only. */
static void op_class(char *out, size_t cap, const char *op)
{
	size_t k = 0;
	for (; *op && k + 1 < cap; op++)
		if ((*op >= 'a' && *op <= 'z') || (*op >= 'A' && *op <= 'Z') || (*op >= '0' && *op <= '9'))
			out[k++] = *op;
	out[k] = 0;
}

#define W 1200
#define H 420
#define L 70  /* left margin */
#define R 70  /* right margin */
#define T 80  /* top: room for the tag labels */
#define B 60  /* bottom */

typedef struct scale { int64_t t0, t1; uint64_t rmax, smax; } scale;

static double xt(const scale *s, int64_t t)
{
	if (s->t1 <= s->t0)
		return L + (W - L - R) / 2.0;
	return L + (double)(t - s->t0) * (W - L - R) / (double)(s->t1 - s->t0);
}

static double yv(uint64_t v, uint64_t max)
{
	return max ? H - B - (double)v * (H - T - B) / (double)max : H - B;
}

static const char *const PALETTE[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
				       "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };

static void page_head(FILE *f, const char *uri, const html *h)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>lancever history: ", f);
	esc(f, uri);
	fputs("</title>\n<style>\nbody{font:14px system-ui,sans-serif;margin:20px;color:#222}\n"
	      ".cleaned{fill:#999;opacity:.18}.gap{fill:#d62728;opacity:.15}\n"
	      ".rows{fill:none;stroke:#1f77b4;stroke-width:1.5}.size{fill:none;stroke:#ff7f0e;stroke-width:1.5;stroke-dasharray:4 2}\n"
	      ".axis{stroke:#444}.tag{font-size:11px;fill:#2ca02c}.lbl{font-size:11px;fill:#555}\n"
	      ".mark{stroke:#fff;stroke-width:.5}.mark.cu{opacity:.45}\n</style></head><body>\n<h1>History of ", f);
	esc(f, uri);
	fprintf(f, "</h1>\n<p>%" PRIu64 " versions", h->total);
	if (h->per_bin > 1)
		fprintf(f, ", summarised in %zu marks of up to %" PRIu64 " versions each", h->nbins, h->per_bin);
	fputs(". Rows: solid line (left axis); size of the data files: dashed line (right axis); "
	      "grey bands: cleaned-up versions (history kept by checkpoints); red bands: gaps (no record). "
	      "Hover a mark for its version.</p>\n", f);
}

static void page_svg(FILE *f, const html *h, const scale *s)
{
	fprintf(f, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\">\n", W, H, W, H);
	for (size_t i = 0; i < h->ncleaned; i++)
		fprintf(f, "<rect class=\"cleaned\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"><title>cleaned up: v%" PRIu64 "-%" PRIu64 "</title></rect>\n",
			xt(s, h->cleaned[i].t0) - 2, T, xt(s, h->cleaned[i].t1) - xt(s, h->cleaned[i].t0) + 4,
			H - T - B, h->cleaned[i].v0, h->cleaned[i].v1);
	for (size_t i = 0; i < h->ngaps; i++)
		fprintf(f, "<rect class=\"gap\" x=\"%.1f\" y=\"%d\" width=\"6\" height=\"%d\"><title>gap: no record of v%" PRIu64 "-%" PRIu64 "</title></rect>\n",
			xt(s, h->gaps[i].t0) - 3, T, H - T - B, h->gaps[i].v0, h->gaps[i].v1);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", L, H - B, W - R, H - B);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", L, T, L, H - B);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", W - R, T, W - R, H - B);
	char a[40], b[40], sz[32];
	lvcli_format_time(a, sizeof a, s->t0);
	lvcli_format_time(b, sizeof b, s->t1);
	fprintf(f, "<text class=\"lbl\" x=\"%d\" y=\"%d\">%s</text>\n", L, H - B + 18, a);
	fprintf(f, "<text class=\"lbl\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", W - R, H - B + 18, b);
	fprintf(f, "<text class=\"lbl\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%" PRIu64 " rows</text>\n", L - 4, T + 4, s->rmax);
	fprintf(f, "<text class=\"lbl\" x=\"%d\" y=\"%d\">%s</text>\n", W - R + 4, T + 4, lvcli_size(sz, sizeof sz, s->smax));
	for (int line = 0; line < 2; line++) {
		fprintf(f, "<polyline class=\"%s\" points=\"", line ? "size" : "rows");
		for (size_t i = 0; i < h->nbins; i++)
			fprintf(f, "%.1f,%.1f ", xt(s, h->bins[i].t1),
				line ? yv(h->bins[i].size, s->smax) : yv(h->bins[i].rows, s->rmax));
		fputs("\"/>\n", f);
	}
}

static void page_marks(FILE *f, const html *h, const scale *s)
{
	const char *ops[32];
	size_t nops = 0;
	for (size_t i = 0; i < h->nbins; i++) {
		const bin *x = &h->bins[i];
		size_t k = 0;
		while (k < nops && strcmp(ops[k], x->op))
			k++;
		if (k == nops && nops < 32)
			ops[nops++] = x->op;
		char cls[24], t0[40], sz[32];
		op_class(cls, sizeof cls, x->op);
		lvcli_format_time(t0, sizeof t0, x->t0);
		fprintf(f, "<circle class=\"mark op-%s%s\" data-v0=\"%" PRIu64 "\" data-v1=\"%" PRIu64 "\" cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"><title>",
			cls, x->cleaned == x->n ? " cu" : "", x->v0, x->v1, xt(s, x->t1), yv(x->rows, s->rmax),
			x->n > 1 ? 4 : 3, PALETTE[k % 10]);
		if (x->n == 1)
			fprintf(f, "v%" PRIu64 " %s ", x->v0, t0);
		else
			fprintf(f, "v%" PRIu64 "-%" PRIu64 " (%" PRIu64 " versions) from %s ", x->v0, x->v1, x->n, t0);
		esc(f, x->op);
		fprintf(f, ", %" PRIu64 " rows, %s%s</title></circle>\n", x->rows, lvcli_size(sz, sizeof sz, x->size),
			x->cleaned ? ", cleaned up" : "");
	}
	for (size_t i = 0; i < h->ntags; i++) {
		double x = xt(s, h->tags[i].t);
		fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke-dasharray=\"2 2\"/>"
			   "<text class=\"tag\" x=\"%.1f\" y=\"%d\" transform=\"rotate(-30 %.1f %d)\">", x, T, x, H - B,
			x + 2, T - 6 - (int)(i % 3) * 12, x + 2, T - 6 - (int)(i % 3) * 12);
		esc(f, h->tags[i].name);
		fprintf(f, " (v%" PRIu64 ")</text>\n", h->tags[i].v);
	}
	fputs("</svg>\n<p>Operations: ", f);
	for (size_t k = 0; k < nops; k++) {
		fprintf(f, "<span style=\"color:%s\">&#9679; ", PALETTE[k % 10]);
		esc(f, ops[k]);
		fputs("</span> ", f);
	}
	fputs("</p>\n", f);
	if (h->more_tags || h->more_cleaned || h->more_gaps)
		fprintf(f, "<p>Not drawn: %" PRIu64 " more tags, %" PRIu64 " more cleaned-up runs, %" PRIu64 " more gaps.</p>\n",
			h->more_tags, h->more_cleaned, h->more_gaps);
}

int lvcli_history_html(FILE *f, lv_dataset *ds, const char *uri, const lv_history_options *o,
		       const lvcli_select *sel, lvcli_refctx *refs)
{
	html *h = calloc(1, sizeof *h);
	if (!h || !(h->bins = calloc(HTML_BINS, sizeof *h->bins))) {
		free(h);
		fputs("lancever: out of memory\n", stderr);
		return 1;
	}
	h->per_bin = 1;
	h->refs = refs;
	h->sel = sel;
	lv_error err = { 0 };
	int rc = 0;
	if (lv_history_each(ds, o, on_row, on_gap, h, NULL, &err) < 0) {
		rc = lvcli_fail(&err);
	} else {
		scale s = { 0 };
		for (size_t i = 0; i < h->nbins; i++) {
			const bin *x = &h->bins[i];
			if (i == 0 || x->t0 < s.t0)
				s.t0 = x->t0;
			if (i == 0 || x->t1 > s.t1)
				s.t1 = x->t1;
			if (x->rows > s.rmax)
				s.rmax = x->rows;
			if (x->size > s.smax)
				s.smax = x->size;
		}
		for (size_t i = 0; i < h->ngaps; i++) /* a gap before the first row: at the start */
			if (h->gaps[i].t0 < s.t0)
				h->gaps[i].t0 = h->gaps[i].t1 = s.t0;
		page_head(f, uri, h);
		page_svg(f, h, &s);
		page_marks(f, h, &s);
		fputs("<script>document.title += ' (' + document.querySelectorAll('#timeline .mark').length"
		      " + ' marks)';</script>\n</body></html>\n", f);
	}
	free(h->bins);
	free(h);
	return rc;
}
