import Foundation
import MarginCore
import Markup

/// Works out what a PDF is from what it holds, offline: its document information and XMP
/// metadata when they are usable, else the title and authors its first page shows (the largest
/// type near the top, the names beneath), and the DOI, arXiv id and year its metadata or first
/// pages state.
enum MetadataDetector {
    /// Pages whose text is searched for a DOI, an arXiv id and a copyright year.
    static let firstPages = 2

    static func detect(_ document: any PDFDocument, firstPage: [TextLine], pageHeight: Double, firstText: String)
        -> FoundMetadata
    {
        let firstPageText = firstPage.map(\.text).joined(separator: "\n")
        let xmp = document.xmp.map { XMP(String($0.prefix(1 << 20))) }
        var found = FoundMetadata()
        let infoTitle = document.title
        let pageTitle = TitleGuess.title(in: firstPage, pageHeight: pageHeight)
        let printed = PrintedWords(firstPageText)
        // The metadata's title when the page prints it (or the page has no title to give);
        // a stale one (another document's, a draft's) gives way to the page's, and so does one
        // the page's title holds ("Geometrie und Topologie" in "Einführung in die Geometrie …").
        func prefer(_ metadata: String) -> Bool {
            guard let page = pageTitle?.title, pageTitle?.strong == true else { return true }
            let short = printed.normalized(metadata)
            if printed.normalized(page).contains(short), short.count < printed.normalized(page).count { return false }
            return printed.holds(metadata) || printed.isEmpty
        }
        if let title = (xmp?.title).map(expandLigatures).flatMap(usableTitle), prefer(title) {
            found.title = title
            found.titleSource = "xmp"
        } else if let title = infoTitle.map(expandLigatures).flatMap(usableTitle), prefer(title) {
            found.title = title
            found.titleSource = "metadata"
        } else if let title = pageTitle?.title {
            found.title = title
            found.titleSource = "page"
        } else if let title = cleanTitle(infoTitle).map(expandLigatures), !Identifiers.isIdentifierTitle(title) {
            // "Microsoft Word - thesis draft.docx" is still better than the file's name.
            found.title = title
            found.titleSource = "metadata"
        }
        // The metadata's authors unless they are a login or a program's name; the page's when
        // the metadata names someone the page doesn't (an uploader, a template's author).
        let metadataAuthor = (xmp?.creators.flatMap(usableAuthor) ?? document.author.flatMap(usableAuthor))
            .map(expandLigatures)
        if let metadataAuthor, pageTitle?.authors == nil || printed.holds(metadataAuthor) || printed.isEmpty {
            found.author = metadataAuthor
        } else {
            found.author = pageTitle?.authors
        }
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
            trimmed.contains(" ") || trimmed.contains(","),
            // A note, a department, an address: not names.
            !trimmed.contains(where: { $0.isNumber || "([{@<".contains($0) })
        else { return nil }
        return trimmed
    }
}

/// The words a first page prints, to ask whether a title or a name from the metadata is on it.
struct PrintedWords {
    private let words: Set<String>

    init(_ text: String) {
        words = Set(PrintedWords.split(text))
    }

    var isEmpty: Bool { words.isEmpty }

    /// Most of the text's words (of three letters or more) are on the page.
    func holds(_ text: String) -> Bool {
        let wanted = PrintedWords.split(text).filter { $0.count >= 3 }
        guard !wanted.isEmpty else { return false }
        return Double(wanted.filter(words.contains).count) >= Double(wanted.count) * 0.7
    }

    /// Lowercased words joined by single spaces, ligatures spelled out.
    func normalized(_ text: String) -> String { PrintedWords.split(text).joined(separator: " ") }

    private static func split(_ text: String) -> [String] {
        expandLigatures(text).lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
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

    /// Lines that open a page's body, not its title block: where the names end for good.
    private static let bodyStarts = try? NSRegularExpression(
        pattern: #"(?i)^\s*(abstract|introduction|keywords|key words|index terms|ccs concepts|contents|summary)\b"#)
    /// Headings and labels that are never a work's title ("1 Introduction", "Contents", "Title").
    private static let junkTitle = try? NSRegularExpression(
        pattern:
            #"(?i)^\s*(([0-9]+(\.[0-9]+)*\.?|[IVX]+\.|chapter [0-9ivx]+|section [0-9]+)\s+\S|(table of )?contents$|title$|abstract$|index$|preface$|foreword$|acknowledge?ments$|references$|bibliography$|appendix\b|front cover$|back cover$|untitled)"#
    )

    /// The title (and authors) the page shows; `strong` when its type sets it apart (a title
    /// found as the first line of a page in one type size is weak: metadata outranks it).
    static func title(in lines: [TextLine], pageHeight: Double) -> (title: String, authors: String?, strong: Bool)? {
        guard !lines.isEmpty else { return nil }
        // The body's size: the size most characters are set in.
        var weight = [Double: Int]()
        for line in lines { weight[(line.fontSize * 2).rounded() / 2, default: 0] += line.text.count }
        guard var body = weight.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) })?.key,
            body > 0
        else { return nil }
        let top = lines.filter { $0.top < pageHeight * 0.6 }
        let candidates = top.enumerated().filter { _, line in isTitleLike(line.text) }
        guard var largest = candidates.map(\.element.fontSize).max() else { return nil }
        var first: Int?
        var cover = false
        let sparse = lines.count <= 40 && lines.reduce(0, { $0 + $1.text.count }) <= 1_500
        let smallest = lines.filter { isWordy($0.text) }.map(\.fontSize).min() ?? body
        if largest >= body * 1.15 {
            first = candidates.first(where: { $0.element.fontSize >= largest - 0.5 })?.offset
        } else if sparse {
            // A cover or title page: little text, its title the largest type on it (a cover
            // has more title than anything else), or, all in one size, the first line standing
            // apart near the top.
            if largest >= smallest * 1.15 {
                body = smallest
                first = candidates.first(where: { $0.element.fontSize >= largest - 0.5 })?.offset
            } else if let (offset, line) = candidates.first, line.top < pageHeight * 0.45, !line.text.hasSuffix("."),
                offset + 1 >= top.count || top[offset + 1].top - line.bottom >= line.fontSize * 1.2
            {
                first = offset
                largest = line.fontSize
            }
            cover = first != nil
        }
        guard let first else { return nil }
        var titleLines = [top[first]]
        var index = first + 1
        while index < top.count, abs(top[index].fontSize - largest) <= 0.5,
            top[index].top - titleLines[titleLines.count - 1].bottom < largest * 1.5,
            isTitleLike(top[index].text), !cover || largest > body || authors(in: top[index].text) == nil
        {
            titleLines.append(top[index])
            index += 1
        }
        var title = cleanPageTitle(joinLines(titleLines.map(\.text)))
        // A subtitle set smaller just below ("Think Stats" / "Exploratory Data Analysis in Python").
        if index < top.count, !title.contains(":"), !title.hasSuffix("?"), !title.hasSuffix("!") {
            let next = top[index]
            let sameSize = lines.filter { abs($0.fontSize - next.fontSize) <= 0.5 }.count
            let gap = next.top - titleLines[titleLines.count - 1].bottom
            // On a cover the subtitle may be set in the size most of its few words are.
            if next.fontSize < largest - 0.5, next.fontSize > (sparse ? smallest : body) + 0.5,
                next.fontSize >= largest * 0.55,
                gap < largest * 1.5, isTitleLike(next.text), authors(in: next.text) == nil, sameSize <= 2,
                (2...14).contains(next.text.split(separator: " ").count), !next.text.hasSuffix("."),
                Identifiers.printedYear(in: next.text) == nil
            {
                title += ": " + cleanPageTitle(next.text)
                index += 1
            }
        }
        guard title.count >= 3, title.count <= 250, title.contains(where: \.isLetter) else { return nil }
        // The authors: the lines below the title, smaller than it (a cover's may be the same
        // size), with their affiliations, addresses and e-mails between them, until the body.
        var names = [PersonName]()
        var scanned = 0
        // Row by row down the page, left to right in a row: names set in a grid (a column an
        // author, as ACM sets them) come in the order they are printed, whatever order poppler
        // reads the grid's columns in.
        let below = top[min(index, top.count)...].sorted {
            abs($0.top - $1.top) > 2 ? $0.top < $1.top : $0.left < $1.left
        }
        var next = below.startIndex
        while next < below.endIndex, names.count < 60, scanned < 90 {
            let line = below[next]
            next += 1
            scanned += 1
            if line.fontSize > largest + 0.5 || (!cover && line.fontSize >= largest - 0.5) { break }
            if matches(bodyStarts, line.text) { break }
            // Names side by side in columns count as a list.
            if let (people, _) = authors(in: line.pieces?.joined(separator: ", ") ?? line.text), !people.isEmpty {
                names += people
                continue
            }
            // Between names: their affiliations, addresses and e-mails; anything else ends them,
            // and so do lines that are none of these just below the title (a table's cells).
            guard isAffiliation(line.text), !names.isEmpty || scanned <= 3 else { break }
        }
        if names.isEmpty, sparse { names = nameColumn(in: lines, below: titleLines[titleLines.count - 1].bottom) }
        let strong = largest > body + 0.5
        return (title, names.isEmpty ? nil : names.map(\.displayName).joined(separator: ", "), strong)
    }

    /// A line of an author block that isn't names: an institution, an address, an e-mail.
    private static func isAffiliation(_ text: String) -> Bool {
        let words = text.split(separator: " ").count
        return matches(afterAuthors, text) || text.contains("@")
            || words <= 8 && (text.contains(",") || text.contains(where: \.isNumber))
    }

    /// A run of two or more lines, one name each in the same type, below the title: the authors
    /// listed down a cover's foot.
    private static func nameColumn(in lines: [TextLine], below: Double) -> [PersonName] {
        var best = [PersonName]()
        var run = [PersonName]()
        var size = 0.0
        for line in lines where line.top > below {
            if let (people, affiliation) = authors(in: line.text), people.count == 1, !affiliation,
                run.isEmpty || abs(line.fontSize - size) <= 0.5
            {
                run += people
                size = line.fontSize
            } else {
                if run.count > best.count { best = run }
                run = []
            }
        }
        if run.count > best.count { best = run }
        // "New Hampshire, New Jersey, New Mexico": a list of places shares its first word.
        let firsts = Dictionary(grouping: best, by: { $0.given ?? "" }).values.map(\.count).max() ?? 0
        return best.count >= 2 && firsts * 2 <= best.count ? best : []
    }

    /// Whether a line could be (part of) a title: not a running head, identifier or notice, not
    /// a numbered heading or a label, not a table's row.
    private static func isTitleLike(_ text: String) -> Bool {
        guard isWordy(text), !matches(notTitle, text), !matches(junkTitle, text), text.count <= 250 else {
            return false
        }
        let digits = text.filter(\.isNumber).count
        return digits * 3 < text.filter { !$0.isWhitespace }.count
    }

    /// A title as printed, without what its page glued to it: a journal's volume and issue
    /// ("29,2Shift work…"), ligatures (U+FB00…), a trailing footnote mark.
    static func cleanPageTitle(_ title: String) -> String {
        var text = expandLigatures(title)
        if let glued = text.range(
            of: #"^[0-9]{1,4}\s*[,(:/]\s*[0-9]{1,4}\)?\s*(?=\p{Lu})"#, options: .regularExpression)
        {
            text.removeSubrange(glued)
        }
        text = text.replacingOccurrences(of: #"\s*[*†‡§¶]+$"#, with: "", options: .regularExpression)
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// The people a line of a title page names ("Ann Smith¹, Bo Jones* and Chen Wu"), and
    /// whether an affiliation or the abstract follows them on it; nil when it isn't a line of names.
    static func authors(in line: String) -> (people: [PersonName], affiliation: Bool)? {
        let marks = CharacterSet(charactersIn: "*†‡§¶#0123456789¹²³⁴⁵⁶⁷⁸⁹⁰,")
        // Grades societies put after names ("Fellow, IEEE", "Member, ACM") are not names.
        let graded = expandLigatures(line).replacingOccurrences(
            of: #",?\s*(Senior |Student |Life |Graduate Student )?(Fellow|Member)(,\s*|\s+)(IEEE|ACM|OSA|SIAM)\b"#,
            with: "", options: .regularExpression)
        let cleaned = graded.replacingOccurrences(
            of: #"(^|\s+)(and|&|with)\s+"#, with: ",", options: .regularExpression)
        let parts = cleaned.split(separator: ",").map {
            $0.trimmingCharacters(in: marks.union(.whitespaces))
        }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { return nil }
        var people = [PersonName]()
        for part in parts {
            if matches(afterAuthors, part) { return (people, true) }
            let words = part.split(separator: " ")
            // Names set side by side without commas ("Ann Smith  Bo Jones  Chen Wu").
            if words.count > 5, let run = runOfNames(words.map(String.init)) {
                people += run
                continue
            }
            guard (2...5).contains(words.count),
                words.allSatisfy({ word in
                    guard let first = word.first else { return false }
                    // "Class A", "Claim ID": a lone capital or a short acronym is no part of a name;
                    // nor are words run together ("DuttFather's") or labels ("Name:").
                    if word.count <= 2, !word.hasSuffix("."), word.allSatisfy(\.isUppercase) { return false }
                    if word.contains(where: { ":()[]/".contains($0) }) || isRunTogether(String(word)) { return false }
                    if ["avenue", "street", "road", "boulevard", "drive", "lane", "suite", "building", "floor"]
                        .contains(word.lowercased())
                    {
                        return false
                    }
                    return first.isUppercase
                        || ["van", "von", "de", "der", "da", "di", "du", "le", "la"].contains(word)
                }),
                let name = AuthorList.name(part)
            else { return nil }
            people.append(name)
        }
        return (people, false)
    }

    /// Names one after another, each a given name, initials, and a family name ("Ann B. Smith
    /// Bo Jones"); nil unless every word falls into a name.
    private static func runOfNames(_ words: [String]) -> [PersonName]? {
        let particles: Set<String> = ["van", "von", "de", "der", "da", "di", "du", "le", "la"]
        func capitalized(_ word: String) -> Bool {
            guard let first = word.first, first.isUppercase else { return false }
            return word.count > 1 && !word.hasSuffix(".")
                && word.dropFirst().allSatisfy { $0.isLetter || $0 == "-" || $0 == "'" }
        }
        func initial(_ word: String) -> Bool {
            word.count <= 3 && word.hasSuffix(".") && word.first?.isUppercase == true
        }
        var people = [PersonName]()
        var index = 0
        while index < words.count {
            guard capitalized(words[index]) else { return nil }
            var parts = [words[index]]
            index += 1
            while index < words.count, initial(words[index]) || particles.contains(words[index]) {
                parts.append(words[index])
                index += 1
            }
            guard index < words.count, capitalized(words[index]) else { return nil }
            parts.append(words[index])
            index += 1
            guard let name = AuthorList.name(parts.joined(separator: " ")) else { return nil }
            people.append(name)
        }
        return people.count >= 2 ? people : nil
    }

    /// A word with a capital after a small letter, as words run together are ("WelfareAndhra");
    /// "McKinley", "DeWitt", "MacArthur" are names.
    private static func isRunTogether(_ word: String) -> Bool {
        let letters = Array(word)
        guard letters.count > 3 else { return false }
        for index in 1..<letters.count where letters[index].isUppercase && letters[index - 1].isLowercase {
            let before = String(letters[..<index])
            if !["Mc", "Mac", "De", "Di", "Da", "La", "Le", "Van", "Von", "O'", "D'"].contains(before) { return true }
        }
        return false
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

    /// The fields of an XMP packet, read by libxml2 (a packet that is not well-formed XML, or
    /// declares a DTD, gives none).
    init(_ xml: String) {
        let fields = XMP.fields(xml)
        title = fields["dc:title"]?.first
        let people = fields["dc:creator"] ?? []
        creators = people.isEmpty ? nil : people.joined(separator: ", ")
        doi = fields["prism:doi"]?.first
        identifier = fields["dc:identifier"]?.first
        publication = fields["prism:publicationName"]?.first
        let dates = [fields["prism:coverDate"]?.first, fields["dc:date"]?.first]
        year = dates.compactMap { $0 }.compactMap { Int($0.prefix(4)) }.first { (1000...2999).contains($0) }
    }

    static let wanted: Set<String> = [
        "dc:title", "dc:creator", "prism:doi", "dc:identifier", "prism:publicationName", "prism:coverDate", "dc:date",
    ]

    /// Each wanted element's values: its `rdf:li` items (a title's alternatives, a list of
    /// creators), else its own text, else an attribute of that name (`prism:doi="…"`).
    static func fields(_ xml: String) -> [String: [String]] {
        guard let nodes = try? Markup.xml(Data(xml.utf8), qualified: true) else { return [:] }
        var fields = [String: [String]]()
        var open = [String]()
        var text = ""
        func add(_ name: String, _ value: String) {
            let value = value.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            if !value.isEmpty { fields[name, default: []].append(value) }
        }
        for node in nodes {
            switch node {
            case .start(let name, let attributes, let empty):
                for (key, value) in attributes where wanted.contains(key) { add(key, value) }
                if !empty { open.append(name) }
                text = ""
            case .text(let piece): text += piece
            case .end(let name):
                _ = open.popLast()
                if name == "rdf:li", let owner = open.last(where: wanted.contains) {
                    add(owner, text)
                } else if wanted.contains(name), fields[name] == nil {
                    add(name, text)
                }
                text = ""
            }
        }
        return fields
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
