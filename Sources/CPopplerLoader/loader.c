/* Loads poppler-glib (with cairo, GObject and GLib, its dependencies) when the first PDF is
   opened, not when margin starts: commands that never read a PDF (list, search, show, db…)
   don't pay for mapping and relocating its ~50 shared libraries.

   Each poppler/cairo/GLib function the Poppler module calls is defined here as a one-jump
   trampoline through a slot (hidden: never exported, so the loaded libraries never bind to
   them). margin_poppler_load() dlopens the library and fills every slot; until then a slot
   points at margin_poppler_unloaded, which aborts with a message. Adding a call to a new
   function means adding its name to MARGIN_POPPLER_SYMBOLS; if it is missing, the linker takes
   the real library instead and the start-up test (no poppler in the executable's NEEDED
   entries) fails. */
#define _GNU_SOURCE
#include "margin_poppler_loader.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MARGIN_POPPLER_SYMBOLS(X) \
    X(_Z16setErrorCallbackPFv13ErrorCategoryxPKcE) \
    X(cairo_create) \
    X(cairo_destroy) \
    X(cairo_fill) \
    X(cairo_image_surface_create) \
    X(cairo_image_surface_create_from_png) \
    X(cairo_image_surface_get_data) \
    X(cairo_image_surface_get_format) \
    X(cairo_image_surface_get_height) \
    X(cairo_image_surface_get_stride) \
    X(cairo_image_surface_get_width) \
    X(cairo_paint) \
    X(cairo_pdf_surface_create) \
    X(cairo_rectangle) \
    X(cairo_scale) \
    X(cairo_set_operator) \
    X(cairo_set_source_rgb) \
    X(cairo_set_source_rgba) \
    X(cairo_status) \
    X(cairo_status_to_string) \
    X(cairo_surface_destroy) \
    X(cairo_surface_finish) \
    X(cairo_surface_flush) \
    X(cairo_surface_status) \
    X(cairo_surface_write_to_png) \
    X(cairo_surface_write_to_png_stream) \
    X(cairo_svg_surface_create) \
    X(g_array_append_vals) \
    X(g_array_sized_new) \
    X(g_array_unref) \
    X(g_bytes_unref) \
    X(g_date_free) \
    X(g_date_get_day) \
    X(g_date_get_month) \
    X(g_date_get_year) \
    X(g_date_valid) \
    X(g_error_free) \
    X(g_filename_to_uri) \
    X(g_free) \
    X(g_list_free_full) \
    X(g_mapped_file_get_bytes) \
    X(g_mapped_file_new) \
    X(g_mapped_file_unref) \
    X(g_object_unref) \
    X(g_tree_destroy) \
    X(g_tree_foreach) \
    X(poppler_annot_get_annot_type) \
    X(poppler_annot_get_color) \
    X(poppler_annot_get_contents) \
    X(poppler_annot_get_modified) \
    X(poppler_annot_get_name) \
    X(poppler_annot_get_rectangle) \
    X(poppler_annot_markup_get_date) \
    X(poppler_annot_markup_get_label) \
    X(poppler_annot_markup_set_label) \
    X(poppler_annot_set_color) \
    X(poppler_annot_set_contents) \
    X(poppler_annot_text_markup_get_quadrilaterals) \
    X(poppler_annot_text_markup_new_highlight) \
    X(poppler_annot_text_new) \
    X(poppler_annot_text_set_icon) \
    X(poppler_action_free) \
    X(poppler_color_free) \
    X(poppler_color_new) \
    X(poppler_dest_free) \
    X(poppler_document_create_dests_tree) \
    X(poppler_document_find_dest) \
    X(poppler_document_get_author) \
    X(poppler_document_get_creation_date) \
    X(poppler_document_get_keywords) \
    X(poppler_document_get_metadata) \
    X(poppler_document_get_n_pages) \
    X(poppler_document_get_page) \
    X(poppler_document_get_permissions) \
    X(poppler_document_get_subject) \
    X(poppler_document_get_title) \
    X(poppler_document_new_from_bytes) \
    X(poppler_document_new_from_file) \
    X(poppler_document_save) \
    X(poppler_index_iter_free) \
    X(poppler_index_iter_get_action) \
    X(poppler_index_iter_get_child) \
    X(poppler_index_iter_new) \
    X(poppler_index_iter_next) \
    X(poppler_page_add_annot) \
    X(poppler_page_find_text_with_options) \
    X(poppler_page_free_annot_mapping) \
    X(poppler_page_free_text_attributes) \
    X(poppler_page_get_annot_mapping) \
    X(poppler_page_get_label) \
    X(poppler_page_get_size) \
    X(poppler_page_get_text) \
    X(poppler_page_get_text_attributes) \
    X(poppler_page_get_text_layout) \
    X(poppler_page_render) \
    X(poppler_page_render_for_printing) \
    X(poppler_rectangle_find_get_match_continued) \
    X(poppler_rectangle_free) \
    /* end */

__attribute__((noreturn, used)) static void margin_poppler_unloaded(void) {
    fputs("margin: internal error: a poppler function was called before poppler was loaded\n", stderr);
    abort();
}

#define MARGIN_SLOT(name) \
    __attribute__((visibility("hidden"), used)) void *margin_slot_##name = (void *)margin_poppler_unloaded;
MARGIN_POPPLER_SYMBOLS(MARGIN_SLOT)

#if defined(__x86_64__)
#define MARGIN_TRAMPOLINE(name)                                                                  \
    __asm__(".text\n.globl " #name "\n.hidden " #name "\n.type " #name ", @function\n" #name ":\n" \
            "    jmp *margin_slot_" #name "(%rip)\n.size " #name ", .-" #name "\n");
#elif defined(__aarch64__)
#define MARGIN_TRAMPOLINE(name)                                                                  \
    __asm__(".text\n.globl " #name "\n.hidden " #name "\n.type " #name ", %function\n" #name ":\n" \
            "    adrp x16, margin_slot_" #name "\n    ldr x16, [x16, :lo12:margin_slot_" #name "]\n" \
            "    br x16\n.size " #name ", .-" #name "\n");
#else
#error "margin's lazy poppler loading has trampolines for x86_64 and aarch64 only"
#endif
MARGIN_POPPLER_SYMBOLS(MARGIN_TRAMPOLINE)

static const char *margin_poppler_error = NULL;
static char margin_poppler_message[512];

static void margin_poppler_load_once(void) {
    static const char *const names[] = {"libpoppler-glib.so.8", "libpoppler-glib.so"};
    void *handle = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && handle == NULL; i++) {
        handle = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    }
    if (handle == NULL) {
        snprintf(margin_poppler_message, sizeof margin_poppler_message,
                 "cannot load poppler-glib (install libpoppler-glib8): %s", dlerror());
        margin_poppler_error = margin_poppler_message;
        return;
    }
    /* dlsym on the handle searches poppler-glib and the libraries it depends on (poppler,
       cairo, GObject, GLib). All are looked up before any slot is set. */
#define MARGIN_COUNT(name) +1
    void *found[0 MARGIN_POPPLER_SYMBOLS(MARGIN_COUNT)];
    size_t index = 0;
#define MARGIN_LOOKUP(name)                                                                        \
    if ((found[index++] = dlsym(handle, #name)) == NULL) {                                        \
        snprintf(margin_poppler_message, sizeof margin_poppler_message,                            \
                 "poppler-glib lacks the function %s (%s)", #name,                                 \
                 #name[0] == '_' ? "poppler's C++ error callback, bound by its mangled name: this "    \
                                   "poppler's ABI differs from the one margin was built for; rebuild" \
                                 : "a newer poppler is needed");                                      \
        margin_poppler_error = margin_poppler_message;                                             \
        return;                                                                                    \
    }
    MARGIN_POPPLER_SYMBOLS(MARGIN_LOOKUP)
    index = 0;
#define MARGIN_FILL(name) margin_slot_##name = found[index++];
    MARGIN_POPPLER_SYMBOLS(MARGIN_FILL)
}

const char *margin_poppler_load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, margin_poppler_load_once);
    return margin_poppler_error;
}
