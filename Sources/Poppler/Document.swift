internal import CPoppler
import Foundation
import MarginCore

/// An open PDF document. Owns its `PopplerDocument` and releases it on deinit.
///
/// Poppler objects are not thread-safe: use one `Document` per thread.
public final class Document {
    let pointer: OpaquePointer
    /// Number of pages, read once at open.
    public let pageCount: Int

    /// Opens the PDF at `path`. Throws `PopplerError.passwordRequired` / `.wrongPassword` for
    /// encrypted files and `.unreadable` when poppler can't parse it.
    public convenience init(path: String, password: String? = nil) throws {
        try loadPoppler()
        var error: UnsafeMutablePointer<GError>?
        let uri = takeString(g_filename_to_uri(path, nil, &error))
        guard let uri else {
            throw PopplerError.unreadable(takeMessage(error)?.message ?? "bad path \(path)")
        }
        let opened = poppler_document_new_from_file(uri, password, &error)
        try self.init(opened: opened, error: error, password: password)
    }

    /// Opens the PDF from a mapped file (see `MappedPDF`), without a password (an encrypted
    /// PDF that needs one throws `passwordRequired`: open it by path). Poppler 22's
    /// `poppler_document_new_from_bytes` crashes when a password given to it is wrong.
    public convenience init(mapped: MappedPDF) throws {
        var error: UnsafeMutablePointer<GError>?
        // The document holds the bytes (and so the mapping) for as long as it lives.
        let opened = poppler_document_new_from_bytes(mapped.bytes, nil, &error)
        try self.init(opened: opened, error: error, password: nil)
    }

    private init(opened: OpaquePointer?, error: UnsafeMutablePointer<GError>?, password: String?) throws {
        guard let document = opened else {
            let (code, message) = takeMessage(error) ?? (0, "unknown error")
            if code == Int32(POPPLER_ERROR_ENCRYPTED.rawValue) {
                throw password == nil ? PopplerError.passwordRequired : PopplerError.wrongPassword
            }
            throw PopplerError.unreadable(message)
        }
        pointer = document
        pageCount = Int(poppler_document_get_n_pages(document))
    }

    /// Some permission (print, copy, change…) is withheld: the PDF is encrypted with an owner
    /// password, even if it opens without one.
    public var isRestricted: Bool {
        poppler_document_get_permissions(pointer).rawValue & POPPLER_PERMISSIONS_FULL.rawValue
            != POPPLER_PERMISSIONS_FULL.rawValue
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }

    var document: OpaquePointer { pointer }

    /// The document's /Title, trimmed; nil when absent or blank.
    public var title: String? { nonBlank(takeString(poppler_document_get_title(document))) }

    /// The document's /Author, trimmed; nil when absent or blank.
    public var author: String? { nonBlank(takeString(poppler_document_get_author(document))) }

    /// The page with the 1-based `number`; only that page is loaded.
    func loadPage(_ number: Int) throws -> Page {
        guard number >= 1, number <= pageCount else {
            throw PopplerError.pageOutOfRange(page: number, count: pageCount)
        }
        guard let page = poppler_document_get_page(document, Int32(number - 1)) else {
            throw PopplerError.pageUnreadable(page: number)
        }
        return Page(pointer: page, number: number, document: self)
    }
}

func nonBlank(_ value: String?) -> String? {
    guard let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else {
        return nil
    }
    return trimmed
}

/// A PDF file mapped into memory, for documents to read there: opened by path, poppler reads a
/// file 256 bytes at a time, a system call each (a 1 MB PDF read through is 4,000 of them).
/// Shared by every document opened from it (on any thread: the bytes are only read). For files
/// no one changes while they are open (a file cut short under a mapping stops the process).
public final class MappedPDF: MappedPDFFile, @unchecked Sendable {
    let bytes: OpaquePointer

    /// Maps the file at `path`; nil when it is larger than `limit` bytes (a mapping takes that
    /// much of the process's address space, which the text extractor's is limited in) or can't
    /// be mapped (the caller opens it by path, and reports what that says).
    public init?(path: String, limit: Int) {
        var info = stat()
        guard (try? loadPoppler()) != nil, stat(path, &info) == 0, info.st_size <= limit else { return nil }
        var error: UnsafeMutablePointer<GError>?
        guard let file = g_mapped_file_new(path, 0, &error) else {
            _ = takeMessage(error)
            return nil
        }
        defer { g_mapped_file_unref(file) }
        guard let bytes = g_mapped_file_get_bytes(file) else { return nil }
        self.bytes = bytes
    }

    deinit { g_bytes_unref(bytes) }
}
