import Foundation
import Poppler

/// What poppler read from a staged PDF.
struct PDFFacts: Sendable {
    var title: String?
    var author: String?
    var pages: Int
}

/// Decides from the bytes, not from a Content-Type, whether a staged file is a whole PDF, then has
/// poppler open it. `input` names the file in messages.
func checkPDF(head: [UInt8], tail: [UInt8], count: Int64, path: String, password: String?, input: String)
    throws -> PDFFacts
{
    guard count > 0 else { throw MarginError.emptyFile(input) }
    let marker = Array("%PDF-".utf8)
    let hasMarker = head.count >= marker.count && (0...(head.count - marker.count)).contains { start in
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
    let hasEOF = tail.count >= eof.count && (0...(tail.count - eof.count)).contains { start in
        tail[start..<start + eof.count].elementsEqual(eof)
    }
    guard hasEOF else { throw MarginError.truncatedPDF(input) }
    do {
        let document = try Document(path: path, password: password)
        guard document.pageCount > 0 else { throw MarginError.unreadablePDF(input, reason: "it has no pages") }
        return PDFFacts(title: document.title, author: document.author, pages: document.pageCount)
    } catch PopplerError.passwordRequired {
        throw MarginError.encrypted(input)
    } catch PopplerError.wrongPassword {
        throw MarginError.wrongPassword(input)
    } catch PopplerError.unreadable(let reason) {
        throw MarginError.unreadablePDF(input, reason: reason)
    }
}
