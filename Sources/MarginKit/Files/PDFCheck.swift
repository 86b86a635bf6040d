import Foundation
import MarginCore

/// What poppler read from a staged PDF.
struct PDFFacts: Sendable {
    var title: String?
    var author: String?
    var pages: Int
    /// The PDF is encrypted (it may still open without a password: an owner password only).
    var encrypted = false
    /// It opens only with a password.
    var needsPassword = false
}

/// Decides from the bytes, not from a Content-Type, whether a staged file is a whole PDF, then has
/// poppler open it. `input` names the file in messages.
func checkPDF(head: [UInt8], tail: [UInt8], count: Int64, path: String, password: String?, input: String)
    throws -> PDFFacts
{
    guard count > 0 else { throw MarginError.emptyFile(input) }
    let marker = Array("%PDF-".utf8)
    let hasMarker =
        head.count >= marker.count
        && (0...(head.count - marker.count)).contains { start in
            head[start..<start + marker.count].elementsEqual(marker)
        }
    guard hasMarker else {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        if text.contains("<html") || text.contains("<!doctype html") || text.contains("<head") {
            throw MarginError.htmlNotPDF(input)
        }
        throw MarginError.notPDF(input)
    }
    let eof = Array("%%EOF".utf8)
    let hasEOF =
        tail.count >= eof.count
        && (0...(tail.count - eof.count)).contains { start in
            tail[start..<start + eof.count].elementsEqual(eof)
        }
    guard hasEOF else { throw MarginError.truncatedPDF(input) }
    do {
        // Opened without a password first, to learn whether it needs one.
        let open = try? PDFEngines.current.open(path: path)
        let document = try open ?? PDFEngines.current.open(path: path, password: password)
        guard document.pageCount > 0 else { throw MarginError.unreadablePDF(input, reason: "it has no pages") }
        let needsPassword = open == nil
        let encrypted = needsPassword || document.isRestricted || trailerNamesEncryption(path)
        return PDFFacts(
            title: cleanTitle(document.title), author: document.author, pages: document.pageCount, encrypted: encrypted,
            needsPassword: needsPassword)
    } catch PDFError.passwordRequired {
        throw MarginError.encrypted(input)
    } catch PDFError.wrongPassword {
        throw MarginError.wrongPassword(input)
    } catch PDFError.unreadable(let reason) {
        throw MarginError.unreadablePDF(input, reason: reason)
    }
}

/// Whether the end of the file (where the trailer or the cross-reference stream's dictionary
/// is) names an /Encrypt dictionary.
func trailerNamesEncryption(_ path: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    let size = (try? handle.seekToEnd()) ?? 0
    try? handle.seek(toOffset: size > 65536 ? size - 65536 : 0)
    let tail = (try? handle.readToEnd()) ?? Data()
    return tail.range(of: Data("/Encrypt".utf8)) != nil
}

/// A title as a reader would want it: what word processors put in the metadata
/// ("Microsoft Word - thesis.docx") is cut to the document's name, and placeholders
/// ("Untitled", "Document1") count as no title.
func cleanTitle(_ title: String?) -> String? {
    guard var title = title?.trimmingCharacters(in: .whitespacesAndNewlines), !title.isEmpty else { return nil }
    for prefix in ["Microsoft Word - ", "Microsoft PowerPoint - ", "Microsoft Excel - ", "Microsoft Word-"]
    where title.hasPrefix(prefix) {
        title = String(title.dropFirst(prefix.count))
    }
    for suffix in [
        ".docx", ".doc", ".pptx", ".ppt", ".xlsx", ".xls", ".odt", ".rtf", ".tex", ".dvi", ".pdf", ".indd", ".qxd",
    ]
    where title.lowercased().hasSuffix(suffix) {
        title = String(title.dropLast(suffix.count))
    }
    title = title.trimmingCharacters(in: .whitespacesAndNewlines)
    let placeholder = title.lowercased().replacingOccurrences(of: "[0-9 _-]", with: "", options: .regularExpression)
    if title.isEmpty
        || ["untitled", "document", "title", "notitle", "untitleddocument", "slide", "presentation", "none", "unknown"]
            .contains(placeholder)
        || Identifiers.isIdentifierTitle(title)
    {
        return nil
    }
    return title
}
