import CPoppler

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

/// Poppler prints syntax warnings about damaged files on stderr; a CLI must keep stderr for its
/// own messages. Installed once, before the first document is opened.
let silencePopplerOnce: Void = {
    margin_poppler_silence()
}()
