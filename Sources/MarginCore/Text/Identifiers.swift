import Foundation

/// Digital Object Identifiers and arXiv identifiers: found in text and URLs, and checked when a
/// user types one.
public enum Identifiers {
    /// A DOI as Crossref recommends matching it (`10.` + a 4–9 digit registrant, `/`, a suffix
    /// of letters, digits and `-._;()/:`), case-insensitive.
    private static let doiPattern = #"10\.[0-9]{4,9}/[-._;()/:A-Za-z0-9<>\[\]]+"#
    /// A modern arXiv id (`YYMM.NNNN` before 2015, `YYMM.NNNNN` since), with its version.
    private static let arxivNew = #"[0-9]{2}(0[1-9]|1[0-2])\.[0-9]{4,5}(v[0-9]+)?"#
    /// An old-style arXiv id: archive (and subject class) / YYMMNNN.
    private static let arxivOld = #"[a-z]+(-[a-z]+)?(\.[A-Z]{2})?/[0-9]{2}(0[1-9]|1[0-2])[0-9]{3}(v[0-9]+)?"#

    /// The first DOI in `text` ("doi:10.…", "https://doi.org/10.…" or bare), with the
    /// punctuation that ends a sentence or closes a bracket it didn't open left out.
    public static func doi(in text: String) -> String? {
        guard let range = text.range(of: doiPattern, options: .regularExpression) else { return nil }
        return trimmedDOI(String(text[range]))
    }

    /// A DOI a user typed: bare, `doi:…` or a doi.org URL; nil when it isn't one.
    public static func parseDOI(_ input: String) -> String? {
        var value = input.trimmingCharacters(in: .whitespacesAndNewlines)
        for prefix in ["https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/"]
        where value.lowercased().hasPrefix(prefix) {
            value = String(value.dropFirst(prefix.count))
        }
        if value.lowercased().hasPrefix("doi:") {
            value = String(value.dropFirst(4)).trimmingCharacters(in: .whitespaces)
        }
        value = value.removingPercentEncoding ?? value
        guard value.range(of: "^" + doiPattern + "$", options: .regularExpression) != nil else { return nil }
        return trimmedDOI(value)
    }

    private static func trimmedDOI(_ found: String) -> String? {
        var doi = Substring(found)
        while let last = doi.last {
            if ".,;:".contains(last) {
                doi = doi.dropLast()
            } else if last == ")" && doi.filter({ $0 == "(" }).count < doi.filter({ $0 == ")" }).count {
                doi = doi.dropLast()
            } else if last == "]" && doi.filter({ $0 == "[" }).count < doi.filter({ $0 == "]" }).count {
                doi = doi.dropLast()
            } else {
                break
            }
        }
        guard let slash = doi.firstIndex(of: "/"), doi.index(after: slash) < doi.endIndex else { return nil }
        return String(doi)
    }

    /// The arXiv id a text names as one ("arXiv:2305.03393v2", "arXiv:hep-th/9901001"); a bare
    /// number is not taken for one.
    public static func arxiv(in text: String) -> String? {
        for pattern in [arxivNew, arxivOld] {
            if let range = text.range(of: #"(?i:arxiv)\s*:\s*"# + pattern, options: .regularExpression) {
                let found = text[range]
                guard let colon = found.firstIndex(of: ":") else { continue }
                return found[found.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The arXiv id of an arxiv.org address (`/abs/ID`, `/pdf/ID`, `/pdf/ID.pdf`), or nil.
    public static func arxiv(inURL url: String) -> String? {
        guard let parsed = URL(string: url), let host = parsed.host?.lowercased(),
            host == "arxiv.org" || host.hasSuffix(".arxiv.org")
        else { return nil }
        var path = parsed.path
        for prefix in ["/abs/", "/pdf/", "/html/"] where path.hasPrefix(prefix) {
            path = String(path.dropFirst(prefix.count))
            if path.lowercased().hasSuffix(".pdf") { path = String(path.dropLast(4)) }
            return parseArxiv(path)
        }
        return nil
    }

    /// The DOI of a doi.org address, or nil.
    public static func doi(inURL url: String) -> String? {
        guard let parsed = URL(string: url), let host = parsed.host?.lowercased(),
            host == "doi.org" || host == "dx.doi.org"
        else { return nil }
        return parseDOI(String(parsed.path.dropFirst()))
    }

    /// An arXiv id a user typed: bare, `arXiv:…` or an arxiv.org address; nil when it isn't one.
    public static func parseArxiv(_ input: String) -> String? {
        var value = input.trimmingCharacters(in: .whitespacesAndNewlines)
        if value.lowercased().hasPrefix("http") { return arxiv(inURL: value) }
        if value.lowercased().hasPrefix("arxiv:") {
            value = String(value.dropFirst(6)).trimmingCharacters(in: .whitespaces)
        }
        for pattern in [arxivNew, arxivOld]
        where value.range(of: "^" + pattern + "$", options: .regularExpression) != nil {
            return value
        }
        return nil
    }

    /// The id without its version ("2305.03393v2" → "2305.03393").
    public static func unversioned(_ arxiv: String) -> String {
        arxiv.replacingOccurrences(of: #"v[0-9]+$"#, with: "", options: .regularExpression)
    }

    /// The year a modern arXiv id was submitted in (its first two digits), or nil.
    public static func year(ofArxiv arxiv: String) -> Int? {
        let id = arxiv.split(separator: "/").last.map(String.init) ?? arxiv
        guard let yy = Int(id.prefix(2)), id.count >= 4 else { return nil }
        return yy >= 91 ? 1900 + yy : 2000 + yy
    }

    /// The year a text states a work is from: a copyright line ("© 2021", "Copyright 2019"),
    /// else nil.
    public static func copyrightYear(in text: String) -> Int? {
        let pattern = #"(©|\(c\)|(?i:copyright))\s*(?:(?i:by)\s+)?((19|20)[0-9]{2})"#
        guard let range = text.range(of: pattern, options: .regularExpression) else { return nil }
        let found = String(text[range])
        guard let year = found.range(of: "(19|20)[0-9]{2}", options: .regularExpression) else { return nil }
        return Int(found[year])
    }

    /// The lines `printedYear` reads a year from, compiled once (every added PDF asks).
    private static let printedYearLines: [NSRegularExpression] = {
        let year = #"(?<![0-9./-])((?:19|20)[0-9]{2})(?![0-9])"#
        let month =
            #"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"#
        let kinds = [
            month + #"\s+(?:[0-9]{1,2}(?:st|nd|rd|th)?(?:\s*[-–]\s*[0-9]{1,2})?,?\s+)?"# + year,
            #"(?<![0-9])((?:19|20)[0-9]{2})-[01][0-9]-[0-3][0-9](?![0-9])"#,
            #"(?i:©|\(c\)|copyright)\s*(?i:by\s+)?"# + year,
            #"(?i:proceedings|conference|symposium|workshop|journal|transactions|letters|vol\.|volume|issue|published|received|accepted|press|doi|https?://doi\.org)\b.*?"#
                + year,
            year
                + #".*?(?i:proceedings|conference|symposium|workshop|journal|transactions|vol\.|volume|doi:|doi\.org)"#,
            #"\b10\.[0-9]{4,9}/.*?"# + year,
        ]
        return kinds.compactMap { try? NSRegularExpression(pattern: $0) }
    }()

    /// The year a first page prints where a reader looks for one: a date line ("7 May 2023",
    /// "March 2019", "2019-03-15"), a copyright line, a venue line ("Proceedings of …, 2019",
    /// "Vol. 12, 2019") or a line with the DOI; the first such line's year. Years in other lines
    /// (a title, a table) don't count.
    public static func printedYear(in page: String, latest: Int? = nil) -> Int? {
        let newest = latest ?? (Calendar(identifier: .gregorian).component(.year, from: Date()) + 1)
        let expressions = printedYearLines
        for line in page.split(whereSeparator: \.isNewline) where line.count <= 400 {
            let text = String(line)
            let range = NSRange(text.startIndex..., in: text)
            for expression in expressions {
                guard let match = expression.firstMatch(in: text, range: range) else { continue }
                // The year is the pattern's last group that matched.
                for group in stride(from: match.numberOfRanges - 1, through: 1, by: -1) {
                    guard let found = Range(match.range(at: group), in: text), let value = Int(text[found]) else {
                        continue
                    }
                    if (1900...newest).contains(value) { return value }
                    break
                }
            }
        }
        return nil
    }

    /// The titles a book added from `url` gets when its PDF has none: the file's name without
    /// `.pdf` (as given, and percent-decoded once more).
    public static func fileTitles(ofSource url: String) -> [String] {
        let parsed = URL(string: url)
        let last = parsed?.lastPathComponent ?? ""
        let name = (last.isEmpty || last == "/") ? (parsed?.host ?? url) : last
        return [name, name.removingPercentEncoding ?? name].map {
            $0.lowercased().hasSuffix(".pdf") ? String($0.dropLast(4)) : $0
        }
    }

    /// Whether a title is a placeholder rather than a title: an arXiv id, a DOI, a file name.
    public static func isIdentifierTitle(_ title: String) -> Bool {
        let value = title.trimmingCharacters(in: .whitespacesAndNewlines)
        if parseArxiv(value) != nil || parseDOI(value) != nil { return true }
        if value.range(of: #"^[0-9]{4}\.[0-9]{4,5}(v[0-9]+)?(\.pdf)?$"#, options: .regularExpression) != nil {
            return true
        }
        return value.range(
            of: #"^[^ ]+\.(pdf|docx?|tex|dvi|ps|eps|odt|rtf|pptx?|xlsx?|exe|indd|qxd|txt|html?)$"#,
            options: [.regularExpression, .caseInsensitive])
            != nil || value.contains("/") && !value.contains(" ")
    }
}
