#ifndef MARGIN_CPOPPLER_SHIM_H
#define MARGIN_CPOPPLER_SHIM_H
#include <poppler.h>
#include <cairo.h>
#include <cairo-svg.h>
#include <cairo-pdf.h>
#include <glib.h>

/* poppler's core prints "Syntax Error: ..." lines on stderr unless an error callback is set.
   poppler-glib does not expose setErrorCallback, so declare the core's C++ symbol
   (void setErrorCallback(void (*)(ErrorCategory, Goffset, const char *))) by its mangled name. */
extern void _Z16setErrorCallbackPFv13ErrorCategoryxPKcE(void (*cb)(int category, long long pos, const char *msg));

static void margin_poppler_ignore_error(int category, long long pos, const char *msg) {
    (void)category; (void)pos; (void)msg;
}

static inline void margin_poppler_silence(void) {
    _Z16setErrorCallbackPFv13ErrorCategoryxPKcE(margin_poppler_ignore_error);
}
#endif
