import Crypto
import Foundation
import MarginCore

extension Library {
    /// Takes in the annotations another viewer left inside the book's PDF: Highlight, Underline,
    /// StrikeOut and Squiggly become highlights with the text under their quads; Text and
    /// FreeText become memos on their page. Author and dates are kept. Each annotation gets a
    /// UUID derived from the file and its place in it, so running this twice adds nothing.
    public func importPDFAnnotations(_ book: Book) async throws -> ImportReport {
        let path = try await ensureCached(book)
        let document = try PDFEngines.current.open(path: path, password: try password(of: book))
        var highlights = [Highlight]()
        var memos = [Memo]()
        let bookId = book.id ?? 0
        let stored = Dictionary(
            try await pageTexts(of: book).map { ($0.number, $0.text) }, uniquingKeysWith: { a, _ in a })
        let recognized = try await recognized(book)
        for number in 1...max(1, document.pageCount) where document.pageCount > 0 {
            let page = readable(try document.page(number), recognized)
            for annotation in page.annotations {
                let created = annotation.created.flatMap { Calendar(identifier: .gregorian).date(from: $0) }
                let modified = annotation.modified.flatMap(parsePDFDate)
                let id = stableUUID(book.sha256, number, annotation.index, annotation.kind.rawValue)
                if let contents = annotation.contents {
                    try checkNoteSize(
                        contents, what: "the note of annotation \(annotation.index + 1)", at: "page \(number)")
                }
                switch annotation.kind {
                case .highlight, .underline, .strikeOut, .squiggly:
                    let rects = annotation.quads.isEmpty ? [annotation.rect] : annotation.quads
                    // Words hyphenated at a line end are joined, as the index reads them.
                    let text = scalarString(SearchableText(page.text(in: rects)).cased)
                    let (prefix, suffix) = context(of: foldedTerm(text), occurrence: 0, in: stored[number] ?? page.text)
                    var highlight = Highlight(
                        bookId: bookId, page: number, text: text, prefix: prefix, suffix: suffix,
                        rects: rects.map(\.array),
                        color: annotation.color.map(HighlightColor.hex) ?? HighlightColor.defaultColor,
                        note: annotation.contents.map(normalizedLineEnds),
                        author: annotation.author)
                    highlight.uuid = id
                    highlight.createdAt = created ?? modified ?? Date()
                    highlight.updatedAt = modified ?? highlight.createdAt
                    highlights.append(highlight)
                case .text, .freeText:
                    guard let contents = annotation.contents.map(normalizedLineEnds) else { continue }
                    // A note margin's PDF export made of a memo on the whole book comes back as one.
                    let wholeBook = annotation.name?.hasPrefix(bookMemoNoteName) == true
                    var memo = Memo(
                        bookId: bookId, page: wholeBook ? nil : number, text: contents, author: annotation.author)
                    memo.uuid = id
                    memo.createdAt = created ?? modified ?? Date()
                    memo.updatedAt = modified ?? memo.createdAt
                    memos.append(memo)
                case .other:
                    continue
                }
            }
        }
        // Annotations imported before (the same UUID) are left as they are.
        let added = try await database.addNewAnnotations(highlights: highlights, memos: memos)
        var report = ImportReport()
        report.highlights = ImportReport.Counts(added: added.highlights, unchanged: highlights.count - added.highlights)
        report.memos = ImportReport.Counts(added: added.memos, unchanged: memos.count - added.memos)
        try await touch(book)
        return report
    }
}

/// A UUID that is the same for the same annotation of the same file.
func stableUUID(_ parts: CustomStringConvertible...) -> UUID {
    let digest = Array(SHA256.hash(data: Data(parts.map(\.description).joined(separator: "\u{1F}").utf8)))
    var bytes = Array(digest.prefix(16))
    bytes[6] = (bytes[6] & 0x0f) | 0x50  // version 5 style: name-based
    bytes[8] = (bytes[8] & 0x3f) | 0x80  // RFC 4122 variant
    return UUID(
        uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
}

/// Parses a PDF date: `D:YYYYMMDDHHmmSSOHH'mm'` (every part after the year optional).
func parsePDFDate(_ text: String) -> Date? {
    var s = Substring(text.trimmingCharacters(in: .whitespaces))
    if s.hasPrefix("D:") { s = s.dropFirst(2) }
    let digits = s.prefix { $0.isNumber }
    guard digits.count >= 4 else { return nil }
    func part(_ offset: Int, _ length: Int, _ fallback: Int) -> Int {
        let start = digits.index(digits.startIndex, offsetBy: offset, limitedBy: digits.endIndex) ?? digits.endIndex
        let end = digits.index(start, offsetBy: length, limitedBy: digits.endIndex) ?? digits.endIndex
        return Int(digits[start..<end]).flatMap { digits.distance(from: start, to: end) == length ? $0 : nil }
            ?? fallback
    }
    var components = DateComponents(
        calendar: Calendar(identifier: .gregorian), year: part(0, 4, 1970), month: part(4, 2, 1), day: part(6, 2, 1),
        hour: part(8, 2, 0), minute: part(10, 2, 0), second: part(12, 2, 0))
    var zone = s.dropFirst(digits.count)
    var offset = 0
    if let sign = zone.first, sign == "+" || sign == "-" {
        zone = zone.dropFirst()
        let numbers = zone.filter(\.isNumber)
        let hours = Int(numbers.prefix(2)) ?? 0
        let minutes = Int(numbers.dropFirst(2).prefix(2)) ?? 0
        offset = (hours * 3600 + minutes * 60) * (sign == "-" ? -1 : 1)
    }
    components.timeZone = TimeZone(secondsFromGMT: offset)
    return components.date
}

/// CRLF and CR line ends as LF.
func normalizedLineEnds(_ text: String) -> String {
    text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
}
