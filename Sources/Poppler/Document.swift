internal import CPoppler
import Foundation

/// An open PDF document. Owns its `PopplerDocument` and releases it on deinit.
///
/// Poppler objects are not thread-safe: use one `Document` per thread.
public final class Document {
    let pointer: OpaquePointer
    /// Number of pages, read once at open.
    public let pageCount: Int

    /// Opens the PDF at `path`. Throws `PopplerError.passwordRequired` / `.wrongPassword` for
    /// encrypted files and `.unreadable` when poppler can't parse it.
    ///
    /// `mapped`: the file is mapped into memory and poppler reads it there. Opened by path,
    /// poppler reads a file 256 bytes at a time, a system call each (a 1 MB PDF read through
    /// is 4,000 of them); mapped, it reads no further. For files no one else changes while they
    /// are open (a file changed under a mapping can stop the process).
    public init(path: String, password: String? = nil, mapped: Bool = false) throws {
        try loadPoppler()
        var error: UnsafeMutablePointer<GError>?
        let opened: OpaquePointer?
        if mapped {
            guard let file = g_mapped_file_new(path, 0, &error) else {
                throw PopplerError.unreadable(takeMessage(error)?.message ?? "cannot read \(path)")
            }
            let bytes = g_mapped_file_get_bytes(file)
            g_mapped_file_unref(file)
            // The document holds the bytes (and so the mapping) for as long as it lives.
            opened = poppler_document_new_from_bytes(bytes, password, &error)
            g_bytes_unref(bytes)
        } else {
            let uri = takeString(g_filename_to_uri(path, nil, &error))
            guard let uri else {
                throw PopplerError.unreadable(takeMessage(error)?.message ?? "bad path \(path)")
            }
            opened = poppler_document_new_from_file(uri, password, &error)
        }
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
    public func page(_ number: Int) throws -> Page {
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
