internal import CPoppler
import CPopplerLoader
import MarginCore

/// Takes ownership of a `gchar *` returned by GLib/poppler and frees it.
func takeString(_ pointer: UnsafeMutablePointer<gchar>?) -> String? {
    guard let pointer else { return nil }
    defer { g_free(pointer) }
    return String(cString: pointer)
}

/// Turns a `GError` into a Swift string and frees it.
func takeMessage(_ error: UnsafeMutablePointer<GError>?) -> (code: Int32, message: String)? {
    guard let error else { return nil }
    defer { g_error_free(error) }
    let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    return (error.pointee.code, message)
}

/// Why poppler-glib could not be loaded, or nil once it is. Loaded on first use (see
/// CPopplerLoader): commands that never open a PDF start without it.
private let popplerLoadFailure: String? = margin_poppler_load().map { String(cString: $0) }

/// Loads poppler-glib if it isn't yet and silences its warnings; every entry point of this module
/// that calls poppler, cairo or GLib without a `Document` calls this first.
func loadPoppler() throws {
    if let popplerLoadFailure { throw PopplerError.libraryMissing(popplerLoadFailure) }
    _ = silencePopplerOnce
}

/// Poppler prints syntax warnings about damaged files on stderr; a CLI must keep stderr for its
/// own messages. Installed once, before the first document is opened.
private let silencePopplerOnce: Void = {
    margin_poppler_silence()
}()
