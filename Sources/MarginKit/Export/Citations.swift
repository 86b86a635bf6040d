import Foundation
import MarginCore

/// How `margin cite` writes references.
public enum CitationFormat: String, CaseIterable, Sendable {
    case bibtex
    case cslJSON = "csl-json"
    case ris
}

/// A book as a reference: what it is and where it can be found.
public struct Reference: Sendable, Equatable {
    public var book: Book
    /// A web address it came from, when it came from one.
    public var url: String?

    public init(book: Book, url: String?) {
        self.book = book
        self.url = url
    }

    /// What kind of work it is, as each format names it: its Crossref type when known, else
    /// what its identifiers and length suggest.
    var entry: WorkType.Entry {
        if let type = book.workType, let entry = WorkType.entries[type] { return entry }
        if book.venue != nil { return WorkType.entries["journal-article"]! }
        if book.arxiv != nil { return WorkType.Entry(bibtex: "misc", ris: "UNPB", csl: "article", venueField: nil) }
        if book.doi == nil, book.pages >= 100 { return WorkType.entries["book"]! }
        return book.doi != nil
            ? WorkType.Entry(bibtex: "misc", ris: "GEN", csl: "article", venueField: nil)
            : WorkType.Entry(bibtex: "misc", ris: "GEN", csl: "document", venueField: nil)
    }

    /// Whether it is a preprint (arXiv's, or posted content) not yet published elsewhere.
    var isPreprint: Bool {
        book.workType == "posted-content" || book.workType == nil && book.venue == nil && book.arxiv != nil
    }

    var people: [PersonName] { AuthorList.parse(book.author) }

    var key: String {
        book.citationKey ?? CitationKey.base(author: book.author, year: book.year, title: book.title)
    }
}

/// References in BibTeX, CSL-JSON and RIS.
public enum Citations {
    public static func format(_ references: [Reference], as format: CitationFormat) -> String {
        switch format {
        case .bibtex: return references.map(bibtex).joined(separator: "\n")
        case .cslJSON: return cslJSON(references)
        case .ris: return references.map(ris).joined()
        }
    }

    // MARK: BibTeX

    static func bibtex(_ reference: Reference) -> String {
        let book = reference.book
        let entry = reference.entry
        var fields = [(String, String)]()
        let people = reference.people
        if !people.isEmpty {
            fields.append(
                (
                    "author",
                    people.map { person in
                        ([person.family, person.suffix, person.given].compactMap { $0 }.map(texEscape)).joined(
                            separator: ", ")
                    }.joined(separator: " and ")
                ))
        }
        // Doubled braces keep the title's capitals as they are.
        fields.append(("title", "{" + texEscape(book.title) + "}"))
        if let venue = book.venue { fields.append((entry.venueField ?? "note", texEscape(venue))) }
        if let publisher = book.publisher {
            // A thesis is its school's, a report its institution's.
            let field = ["phdthesis": "school", "techreport": "institution"][entry.bibtex] ?? "publisher"
            fields.append((field, texEscape(publisher)))
        }
        if let year = book.year { fields.append(("year", String(year))) }
        if let doi = book.doi { fields.append(("doi", texEscape(doi))) }
        if let arxiv = book.arxiv {
            fields.append(("eprint", Identifiers.unversioned(arxiv)))
            fields.append(("archiveprefix", "arXiv"))
        }
        if let url = reference.url { fields.append(("url", url.replacingOccurrences(of: "}", with: "%7D"))) }
        let body = fields.map { "  \($0.0) = {\($0.1)}" }.joined(separator: ",\n")
        return "@\(entry.bibtex){\(reference.key),\n\(body)\n}\n"
    }

    /// Text as (La)TeX reads it back: its special characters escaped, accented Latin letters as
    /// accent commands ("Müller" → `M{\"u}ller`), other characters left as UTF-8 (for biber).
    public static func texEscape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += "{\\textbackslash}"
            case "{": result += "\\{"
            case "}": result += "\\}"
            case "$": result += "\\$"
            case "&": result += "\\&"
            case "%": result += "\\%"
            case "#": result += "\\#"
            case "_": result += "\\_"
            case "^": result += "{\\textasciicircum}"
            case "~": result += "{\\textasciitilde}"
            default:
                if character.isASCII {
                    result.append(character)
                } else {
                    result += texLetter(character) ?? String(character)
                }
            }
        }
        return result
    }

    private static let letters: [Character: String] = [
        "ß": "{\\ss}", "ø": "{\\o}", "Ø": "{\\O}", "æ": "{\\ae}", "Æ": "{\\AE}", "œ": "{\\oe}", "Œ": "{\\OE}",
        "å": "{\\aa}", "Å": "{\\AA}", "ł": "{\\l}", "Ł": "{\\L}", "ı": "{\\i}", "–": "--", "—": "---",
    ]
    private static let accents: [UInt32: String] = [
        0x300: "`", 0x301: "'", 0x302: "^", 0x303: "~", 0x304: "=", 0x306: "u", 0x307: ".", 0x308: "\"",
        0x30A: "r", 0x30B: "H", 0x30C: "v", 0x327: "c", 0x328: "k",
    ]

    /// An accented Latin letter as a TeX accent command, or nil.
    private static func texLetter(_ character: Character) -> String? {
        if let known = letters[character] { return known }
        let scalars = Array(String(character).decomposedStringWithCanonicalMapping.unicodeScalars)
        guard scalars.count == 2, scalars[0].isASCII, scalars[0].properties.isAlphabetic,
            let accent = accents[scalars[1].value]
        else { return nil }
        var base = String(scalars[0])
        if base == "i" && "`'^\"".contains(accent) { base = "\\i" }
        let letter = accent.first?.isLetter == true ? "\\\(accent){\(base)}" : "\\\(accent)\(base)"
        return "{" + letter + "}"
    }

    // MARK: CSL-JSON

    static func cslJSON(_ references: [Reference]) -> String {
        let items: [[String: Any]] = references.map { reference in
            let book = reference.book
            var item: [String: Any] = ["id": reference.key, "title": book.title]
            item["type"] = reference.entry.csl
            let people = reference.people
            if !people.isEmpty {
                item["author"] = people.map { person -> [String: String] in
                    var name = ["family": person.family]
                    if let given = person.given { name["given"] = given }
                    if let suffix = person.suffix { name["suffix"] = suffix }
                    return name
                }
            }
            if let year = book.year { item["issued"] = ["date-parts": [[year]]] }
            if let doi = book.doi { item["DOI"] = doi }
            if let venue = book.venue { item["container-title"] = venue }
            if let publisher = book.publisher { item["publisher"] = publisher }
            if let arxiv = book.arxiv {
                item["number"] = "arXiv:" + arxiv
                if reference.isPreprint && book.publisher == nil { item["publisher"] = "arXiv" }
            }
            if let url = reference.url { item["URL"] = url }
            item["citation-key"] = reference.key
            return item
        }
        let data =
            (try? JSONSerialization.data(
                withJSONObject: items, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
            ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    // MARK: RIS

    static func ris(_ reference: Reference) -> String {
        let book = reference.book
        var lines = [(String, String)]()
        lines.append(("TY", reference.entry.ris))
        lines.append(("ID", reference.key))
        for person in reference.people {
            lines.append(
                ("AU", [person.family, person.given, person.suffix].compactMap { $0 }.joined(separator: ", ")))
        }
        lines.append(("TI", book.title))
        if let venue = book.venue { lines.append(("T2", venue)) }
        if let publisher = book.publisher { lines.append(("PB", publisher)) }
        if let year = book.year { lines.append(("PY", String(year))) }
        if let doi = book.doi { lines.append(("DO", doi)) }
        if let arxiv = book.arxiv { lines.append(("AN", "arXiv:" + arxiv)) }
        if let url = reference.url { lines.append(("UR", url)) }
        lines.append(("ER", ""))
        // One line a tag: line breaks inside a value would end it.
        return lines.map { tag, value in
            let flat = value.split(whereSeparator: \.isNewline).joined(separator: " ")
            return "\(tag)  - \(flat)"
        }.joined(separator: "\n") + "\n\n"
    }
}
