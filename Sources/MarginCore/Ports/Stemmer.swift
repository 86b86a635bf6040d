import Foundation

/// Reduces a word to its stem in a language ("studies", "study", "studied" → "studi" in
/// English), so that a search for one form finds the others. The Snowball stemmers (the
/// `Snowball` target) are installed by the executables (`Stemmers.install`); without them a
/// search matches the words as typed.
public protocol Stemmer: Sendable {
    /// The languages it stems, as ISO 639-1 codes ("en", "de").
    var languages: Set<String> { get }
    /// The stems of folded words (lowercase, no accents: `folded`) in `language`, in order; nil
    /// when the language has no stemmer here.
    func stems(_ words: [String], language: String) -> [String]?
}

/// The process's stemmer, if it has one.
public enum Stemmers {
    private static let installed = Installed<any Stemmer>()

    public static func install(_ stemmer: any Stemmer) { installed.install(stemmer) }

    public static var current: (any Stemmer)? { installed.value }
}
