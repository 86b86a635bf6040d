#ifndef MARGIN_POPPLER_LOADER_H
#define MARGIN_POPPLER_LOADER_H
/* Loads poppler-glib and binds the functions margin calls; safe to call from any thread, any
   number of times. Returns NULL once loaded, or a message saying why it cannot be. */
const char *margin_poppler_load(void);
#endif
