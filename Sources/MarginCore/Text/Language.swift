import Foundation

/// The language a book is written in, told from its text: ISO 639-1 codes ("en", "de").
public enum Languages {
    /// The languages margin tells apart, by their commonest short words (folded: lowercase, no
    /// accents, as the index holds them). Each list leaves out words as common in another
    /// language of the list ("de", "a", "e", "en", "la").
    static let commonWords: [String: Set<String>] = [
        "en": [
            "the", "and", "of", "to", "is", "that", "it", "for", "was", "with", "on", "are", "this", "be", "by",
            "which", "have", "from", "or", "but", "they", "were", "been", "their", "has", "we", "an", "not", "can",
        ],
        "de": [
            "der", "und", "das", "ist", "nicht", "mit", "den", "sich", "auf", "ein", "eine", "dem", "des", "auch",
            "fur", "wird", "sind", "von", "zu", "im", "werden", "oder", "aber", "wie", "nach", "bei", "wir", "dass",
        ],
        "fr": [
            "le", "les", "et", "des", "est", "une", "du", "qui", "dans", "pour", "pas", "par", "sur", "ne", "il",
            "au", "sont", "avec", "plus", "ce", "cette", "aux", "ou", "mais", "nous", "leur", "vous", "sa",
        ],
        "es": [
            "el", "los", "las", "que", "y", "un", "es", "por", "con", "para", "del", "se", "no", "al", "lo",
            "como", "mas", "pero", "sus", "su", "fue", "este", "esta", "son", "entre", "cuando", "muy", "sin",
        ],
        "it": [
            "il", "di", "che", "e", "un", "per", "della", "non", "sono", "con", "si", "gli", "dei", "nel", "alla",
            "come", "anche", "piu", "ma", "questo", "essere", "delle", "degli", "ha", "del", "una", "lo", "nella",
        ],
        "pt": [
            "o", "os", "que", "e", "do", "da", "em", "um", "uma", "para", "com", "nao", "dos", "das", "por", "mais",
            "como", "mas", "ao", "ele", "sao", "foi", "pelo", "pela", "seu", "sua", "tem", "isso",
        ],
        "nl": [
            "het", "een", "van", "is", "dat", "niet", "op", "te", "zijn", "met", "voor", "die", "er", "aan", "ook",
            "als", "maar", "om", "bij", "wordt", "door", "naar", "dan", "wat", "nog", "worden", "deze", "hij",
        ],
        "sv": [
            "och", "att", "det", "som", "ar", "av", "med", "till", "den", "har", "inte", "om", "ett", "pa", "jag",
            "var", "men", "sig", "fran", "kan", "vid", "ocksa", "eller", "efter", "sa", "hade", "skulle", "nar",
        ],
        "ru": [
            "и", "в", "не", "на", "что", "с", "по", "как", "это", "он", "из", "к", "то", "но", "а", "у", "за", "от",
            "для", "же", "его", "так", "было", "или", "о", "она", "быть", "при", "только", "был",
        ],
    ]

    /// Every language margin can be told a book is in (`edit --lang`): those it tells apart, and
    /// Chinese and Japanese (told by their scripts).
    public static let known: [String] = (Array(commonWords.keys) + ["ja", "zh"]).sorted()

    /// What to say of a language margin doesn't know.
    public static func unknown(_ code: String) -> String {
        "'\(code)' is not a language margin knows; one of: \(known.joined(separator: ", "))"
    }

    /// How many words of a book are read to tell its language.
    static let sample = 5_000

    /// The language of these texts (a book's pages), or nil when none is clear: Chinese or
    /// Japanese when most of its letters are Han (with kana: Japanese); else the language whose
    /// common words are most of its words, when they are at least one word in twenty and twice
    /// as many as the next language's.
    public static func detect(_ texts: [String]) -> String? {
        var counts = [String: Int]()
        var words = 0
        var letters = 0
        var han = 0
        var kana = 0
        outer: for text in texts {
            for word in indexWords(SearchableText(text).folded) {
                words += 1
                for scalar in word.unicodeScalars where scalar.properties.isAlphabetic {
                    letters += 1
                    switch scalar.value {
                    case 0x3040...0x30FF: kana += 1
                    case 0x4E00...0x9FFF, 0x3400...0x4DBF: han += 1
                    default: break
                    }
                }
                for (language, common) in commonWords where common.contains(word) {
                    counts[language, default: 0] += 1
                }
                if words >= sample { break outer }
            }
        }
        if letters > 0, (han + kana) * 2 > letters { return kana * 10 > han + kana ? "ja" : "zh" }
        let ranked = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
        guard let best = ranked.first, best.value * 20 >= words, best.value >= 5 else { return nil }
        if ranked.count > 1, ranked[1].value * 2 > best.value { return nil }
        return best.key
    }
}
