import Foundation
import MarginCore
import Poppler

/// Works out what a PDF is from what it holds, offline: its document information and XMP
/// metadata when they are usable, else the title and authors its first page shows (the largest
/// type near the top, the names beneath), and the DOI, arXiv id and year its metadata or first
/// pages state.
enum MetadataDetector {
    /// Pages whose text is searched for a DOI, an arXiv id and a copyright year.
    static let firstPages = 2

    static func detect(_ document: Document, firstPage: [TextLine], pageHeight: Double, firstText: String)
        -> FoundMetadata
    {
        let firstPageText = firstPage.map(\.text).joined(separator: "\n")
        let xmp = document.xmp.map { XMP(String($0.prefix(1 << 20))) }
        var found = FoundMetadata()
        let infoTitle = document.title
        let pageTitle = TitleGuess.title(in: firstPage, pageHeight: pageHeight)
        if let title = xmp?.title.flatMap(usableTitle) {
            found.title = title
            found.titleSource = "xmp"
        } else if let title = infoTitle.flatMap(usableTitle) {
            found.title = title
            found.titleSource = "metadata"
        } else if let title = pageTitle?.title {
            found.title = title
            found.titleSource = "page"
        } else if let title = cleanTitle(infoTitle) {
            // "Microsoft Word - thesis draft.docx" is still better than the file's name.
            found.title = title
            found.titleSource = "metadata"
        }
        let infoAuthor = document.author.flatMap(usableAuthor)
        found.author = xmp?.creators.flatMap(usableAuthor) ?? infoAuthor ?? pageTitle?.authors
        let metadataText = [document.subject, document.keywords, xmp?.doi, xmp?.identifier].compactMap { $0 }
            .joined(separator: "\n")
        found.doi =
            xmp?.doi.flatMap(Identifiers.parseDOI) ?? Identifiers.doi(in: metadataText)
            ?? Identifiers.doi(in: firstText)
        found.arxiv = Identifiers.arxiv(in: metadataText) ?? Identifiers.arxiv(in: firstText)
        found.venue = xmp?.publication
        found.year =
            xmp?.year ?? found.arxiv.flatMap(Identifiers.year(ofArxiv:)) ?? Identifiers.printedYear(in: firstPageText)
            ?? Identifiers.copyrightYear(in: firstText)
        found.yearSource = found.year == nil ? nil : YearSource.document
        if found.year == nil, let created = document.creationDate {
            found.year = Calendar(identifier: .gregorian).component(.year, from: created)
            found.yearSource = YearSource.file
        }
        return found
    }

    /// A metadata title worth keeping: not empty, not an application's or a file's name, not an
    /// identifier.
    static func usableTitle(_ title: String) -> String? {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let clean = cleanTitle(trimmed), clean == trimmed, !Identifiers.isIdentifierTitle(clean),
            clean.contains(where: \.isLetter)
        else { return nil }
        return clean
    }

    /// A metadata author worth keeping: not a user name or a program.
    static func usableAuthor(_ author: String) -> String? {
        let trimmed = author.trimmingCharacters(in: .whitespacesAndNewlines)
        let lower = trimmed.lowercased()
        guard !trimmed.isEmpty, trimmed.contains(where: \.isLetter),
            !["unknown", "user", "admin", "administrator", "author", "owner", "root"].contains(lower),
            !lower.contains("microsoft"), !lower.contains("latex"), !lower.contains("tex "),
            trimmed.contains(" ") || trimmed.contains(",")
        else { return nil }
        return trimmed
    }
}

/// The title and authors a paper's first page shows.
enum TitleGuess {
    /// Lines that are never a title: running heads, identifiers, notices.
    private static let notTitle = try? NSRegularExpression(
        pattern:
            #"(?i)(arxiv:|doi|https?:|www\.|©|copyright|preprint|journal of|proceedings|conference|vol\.|volume|issn|isbn|received|accepted|published|licen[cs]e|page [0-9])"#
    )
    /// Lines after the authors: where the names end.
    private static let afterAuthors = try? NSRegularExpression(
        pattern:
            #"(?i)(abstract|introduction|universit|institut|department|dept\.|school|college|laborator|\blabs?\b|research|centre|center|inc\.|corp|ltd|gmbh|@|\bemail\b|\bcorrespond|keywords)"#
    )

    static func title(in lines: [TextLine], pageHeight: Double) -> (title: String, authors: String?)? {
        guard !lines.isEmpty else { return nil }
        // The body's size: the size most characters are set in.
        var weight = [Double: Int]()
        for line in lines { weight[(line.fontSize * 2).rounded() / 2, default: 0] += line.text.count }
        guard let body = weight.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) })?.key,
            body > 0
        else { return nil }
        let top = lines.filter { $0.top < pageHeight * 0.6 }
        let candidates = top.enumerated().filter { _, line in !matches(notTitle, line.text) && isWordy(line.text) }
        guard let largest = candidates.map(\.element.fontSize).max(), largest >= body * 1.15 else { return nil }
        guard let first = candidates.first(where: { $0.element.fontSize >= largest - 0.5 })?.offset else { return nil }
        var titleLines = [top[first]]
        var index = first + 1
        while index < top.count, abs(top[index].fontSize - largest) <= 0.5,
            top[index].top - titleLines[titleLines.count - 1].bottom < largest * 1.5
        {
            titleLines.append(top[index])
            index += 1
        }
        let title = joinLines(titleLines.map(\.text))
        guard title.count >= 3, title.count <= 300, title.contains(where: \.isLetter) else { return nil }
        // The authors: the lines just below, smaller than the title, until an affiliation or
        // the abstract.
        var names = [PersonName]()
        while index < top.count, names.count < 40 {
            let line = top[index]
            if line.fontSize >= largest - 0.5 { break }
            // "Ann Smith, Example Labs": the names before the affiliation, and no line after it.
            guard let (people, affiliation) = authors(in: line.text), !people.isEmpty else { break }
            names += people
            if affiliation { break }
            index += 1
        }
        return (title, names.isEmpty ? nil : names.map(\.displayName).joined(separator: ", "))
    }

    /// The people a line of a title page names ("Ann Smith¹, Bo Jones* and Chen Wu"), and
    /// whether an affiliation or the abstract follows them on it; nil when it isn't a line of names.
    static func authors(in line: String) -> (people: [PersonName], affiliation: Bool)? {
        let marks = CharacterSet(charactersIn: "*†‡§¶#0123456789¹²³⁴⁵⁶⁷⁸⁹⁰,")
        let cleaned = line.replacingOccurrences(of: #"\s+(and|&)\s+"#, with: ",", options: .regularExpression)
        let parts = cleaned.split(separator: ",").map {
            $0.trimmingCharacters(in: marks.union(.whitespaces))
        }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { return nil }
        var people = [PersonName]()
        for part in parts {
            if matches(afterAuthors, part) { return (people, true) }
            let words = part.split(separator: " ")
            guard (2...5).contains(words.count),
                words.allSatisfy({ word in
                    guard let first = word.first else { return false }
                    return first.isUppercase
                        || ["van", "von", "de", "der", "da", "di", "du", "le", "la"].contains(word)
                }),
                let name = AuthorList.name(part)
            else { return nil }
            people.append(name)
        }
        return (people, false)
    }

    private static func isWordy(_ text: String) -> Bool {
        text.filter(\.isLetter).count >= 3
    }

    private static func matches(_ expression: NSRegularExpression?, _ text: String) -> Bool {
        expression?.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    /// Lines joined with a space; a word hyphenated at a line's end is joined back.
    static func joinLines(_ lines: [String]) -> String {
        var result = ""
        for line in lines {
            if result.hasSuffix("-"), let first = line.first, first.isLowercase {
                result.removeLast()
                result += line
            } else {
                result += result.isEmpty ? line : " " + line
            }
        }
        return result.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}

/// The few fields of an XMP packet a citation needs, read from its XML text.
struct XMP {
    var title: String?
    var creators: String?
    var doi: String?
    var identifier: String?
    var publication: String?
    var year: Int?

    init(_ xml: String) {
        title = XMP.items(of: "dc:title", in: xml).first ?? XMP.simple("dc:title", in: xml)
        let people = XMP.items(of: "dc:creator", in: xml)
        creators = people.isEmpty ? nil : people.joined(separator: ", ")
        doi = XMP.simple("prism:doi", in: xml)
        identifier = XMP.simple("dc:identifier", in: xml)
        publication = XMP.simple("prism:publicationName", in: xml)
        let dates = [XMP.simple("prism:coverDate", in: xml), XMP.items(of: "dc:date", in: xml).first]
        year = dates.compactMap { $0 }.compactMap { Int($0.prefix(4)) }.first { (1000...2999).contains($0) }
    }

    /// The `rdf:li` items inside an element (`dc:title`'s alternatives, `dc:creator`'s list).
    static func items(of element: String, in xml: String) -> [String] {
        guard let body = content(of: element, in: xml) else { return [] }
        var items = [String]()
        var rest = Substring(body)
        while let open = rest.range(of: "<rdf:li") {
            guard let end = rest[open.upperBound...].firstIndex(of: ">") else { break }
            let after = rest.index(after: end)
            guard let close = rest[after...].range(of: "</rdf:li>") else { break }
            let value = decodeEntities(String(rest[after..<close.lowerBound]))
            if !value.isEmpty { items.append(value) }
            rest = rest[close.upperBound...]
        }
        return items
    }

    /// An element's text, or the attribute of the same name (`<rdf:Description prism:doi="…">`).
    static func simple(_ element: String, in xml: String) -> String? {
        if let body = content(of: element, in: xml), !body.contains("<") {
            let value = decodeEntities(body)
            return value.isEmpty ? nil : value
        }
        guard let attribute = xml.range(of: element + "=\"") else { return nil }
        guard let end = xml[attribute.upperBound...].firstIndex(of: "\"") else { return nil }
        let value = decodeEntities(String(xml[attribute.upperBound..<end]))
        return value.isEmpty ? nil : value
    }

    private static func content(of element: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<" + element),
            let end = xml[open.upperBound...].firstIndex(of: ">"),
            xml[xml.index(before: end)] != "/",
            let close = xml[end...].range(of: "</" + element + ">")
        else { return nil }
        return String(xml[xml.index(after: end)..<close.lowerBound])
    }

    static func decodeEntities(_ text: String) -> String {
        var result = text
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'")] {
            result = result.replacingOccurrences(of: entity, with: character)
        }
        // Numeric references, then the ampersand last.
        while let range = result.range(of: "&#(x[0-9A-Fa-f]+|[0-9]+);", options: .regularExpression) {
            let code = result[range].dropFirst(2).dropLast()
            let value = code.hasPrefix("x") ? UInt32(code.dropFirst(), radix: 16) : UInt32(code)
            result.replaceSubrange(range, with: value.flatMap(Unicode.Scalar.init).map { String($0) } ?? "")
        }
        result = result.replacingOccurrences(of: "&amp;", with: "&")
        return result.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
