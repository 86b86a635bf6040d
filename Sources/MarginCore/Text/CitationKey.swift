import Foundation

/// A person's name split as citations need it.
public struct PersonName: Sendable, Equatable, Codable {
    public var given: String?
    public var family: String
    /// "Jr.", "III".
    public var suffix: String?

    public init(given: String?, family: String, suffix: String? = nil) {
        self.given = given
        self.family = family
        self.suffix = suffix
    }

    /// "Given Family Suffix", as the book's author field holds it.
    public var displayName: String {
        [given, family, suffix].compactMap { $0 }.joined(separator: " ")
    }
}

/// A book's author field as a list of people: "A. Smith, B. Jones and C. Wu", "Smith, Ann;
/// Jones, Bo", "Ann Smith & Bo Jones".
public enum AuthorList {
    private static let particles: Set<String> = [
        "van", "von", "de", "der", "den", "da", "di", "del", "della", "des", "du", "le", "la", "ten", "ter", "dos",
        "das", "bin", "al",
    ]
    private static let suffixes: Set<String> = ["jr", "jr.", "sr", "sr.", "ii", "iii", "iv"]

    public static func parse(_ field: String?) -> [PersonName] {
        guard let field = field?.trimmingCharacters(in: .whitespacesAndNewlines), !field.isEmpty else { return [] }
        if field.contains(";") {
            return field.split(separator: ";").compactMap { part in
                let piece = part.trimmingCharacters(in: .whitespaces)
                if let comma = piece.firstIndex(of: ",") {
                    let family = piece[..<comma].trimmingCharacters(in: .whitespaces)
                    let given = piece[piece.index(after: comma)...].trimmingCharacters(in: .whitespaces)
                    return family.isEmpty ? nil : PersonName(given: given.isEmpty ? nil : given, family: family)
                }
                return name(piece)
            }
        }
        let normalized = field.replacingOccurrences(of: #"\s+(and|&)\s+"#, with: ",", options: .regularExpression)
        var parts = normalized.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        // A trailing "Jr." belongs to the name before it.
        var merged = [String]()
        for part in parts {
            if suffixes.contains(part.lowercased()), let last = merged.popLast() {
                merged.append(last + " " + part)
            } else {
                merged.append(part)
            }
        }
        parts = merged
        // "Smith, Ann" (one author written family first): every part one word, two of them.
        if parts.count == 2, parts.allSatisfy({ !$0.contains(" ") }), !field.contains(" and "),
            !field.contains("&")
        {
            return [PersonName(given: parts[1], family: parts[0])]
        }
        return parts.compactMap(name)
    }

    /// "Ann B. Smith", "Ludwig van Beethoven", "Martin Luther King Jr." split into given and family.
    public static func name(_ text: String) -> PersonName? {
        var words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard !words.isEmpty else { return nil }
        var suffix: String?
        if words.count > 1, let last = words.last, suffixes.contains(last.lowercased()) {
            suffix = last
            words.removeLast()
        }
        guard words.count > 1 else { return PersonName(given: nil, family: words[0], suffix: suffix) }
        // The family name starts at its first lowercase particle, else it is the last word.
        var start = words.count - 1
        if let particle = words.indices.dropFirst().dropLast().first(where: { particles.contains(words[$0]) }) {
            start = particle
        }
        return PersonName(
            given: words[..<start].joined(separator: " "), family: words[start...].joined(separator: " "),
            suffix: suffix)
    }
}

/// Citation keys: `author-year-word` ("muller2023attention"), plain ASCII.
public enum CitationKey {
    private static let skipped: Set<String> = [
        "a", "an", "the", "on", "of", "in", "for", "and", "to", "with", "towards", "toward", "from", "by", "at", "is",
        "are", "how", "what", "why", "when", "do", "does", "its", "via", "into",
    ]

    /// The first author's family name, the year and the title's first word that says something,
    /// folded to lowercase ASCII letters and digits.
    public static func base(author: String?, year: Int?, title: String) -> String {
        let family = AuthorList.parse(author).first.map { $0.family.split(separator: " ").last.map(String.init) ?? "" }
        let name = family.map(ascii) ?? ""
        let word =
            title.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map { ascii(String($0)) }.first {
                !$0.isEmpty && !skipped.contains($0)
            } ?? ""
        let key = (name.isEmpty ? "anon" : name) + (year.map(String.init) ?? "") + word
        return key
    }

    /// `base` itself when free, else `base` followed by "a", "b", … "z", "aa", …
    public static func first(_ base: String, notIn taken: Set<String>) -> String {
        guard taken.contains(base) else { return base }
        var index = 0
        while true {
            var suffix = ""
            var n = index
            repeat {
                suffix = String(UnicodeScalar(UInt8(97 + n % 26))) + suffix
                n = n / 26 - 1
            } while n >= 0
            if !taken.contains(base + suffix) { return base + suffix }
            index += 1
        }
    }

    /// Lowercase ASCII letters and digits: accents dropped ("Müller" → "muller"), other
    /// characters left out.
    public static func ascii(_ text: String) -> String {
        let stripped = text.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
        var result = ""
        for scalar in stripped.unicodeScalars {
            switch scalar {
            case "a"..."z", "0"..."9": result.unicodeScalars.append(scalar)
            case "A"..."Z": result += String(scalar).lowercased()
            case "ß": result += "ss"
            case "ø": result += "o"
            case "æ": result += "ae"
            case "œ": result += "oe"
            case "ł": result += "l"
            case "đ": result += "d"
            case "þ": result += "th"
            default: continue
            }
        }
        return result
    }
}
