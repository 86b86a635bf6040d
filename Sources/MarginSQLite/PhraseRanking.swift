import Foundation
import GRDB

/// FTS5's bm25 order for a search of one phrase (or a choice of phrases, the first word's
/// spellings), worked out from one pass over the index.
///
/// `ORDER BY rank` evaluates the expression, then, for each phrase, every page holding it once
/// more (the phrase's weight, IDF), which for a phrase ending in a prefix means merging every
/// word starting with it again: two more passes of the three a phrase search made. When the
/// expression is a phrase or a choice of phrases, the pages holding phrase i are exactly the
/// matching pages with hits of phrase i, so the pass that finds the pages can bring what bm25
/// needs of each (`margin_phrase_hits`, CFTS5), and the scores follow here, computed as FTS5
/// computes them (k1 = 1.2, b = 0.75, one column of weight 1), in the same order of operations.
enum PhraseRanking {
    /// The statement reading the pages of `filter` (a `MATCH` on `page_words`) with their hits,
    /// at most `limit`.
    static func sql(_ filter: String, limit: Int) -> String {
        "SELECT rowid, margin_phrase_hits(page_words) FROM page_words WHERE \(filter) LIMIT \(limit)"
    }

    /// Whether a part of a query (`PageWords.parts`) is a phrase of several words (or a choice of
    /// such phrases): few pages hold one, and those are read once. A single word may be on most
    /// pages, where reading what bm25 needs of every page costs more than the search.
    static func isPhrase(_ part: String) -> Bool {
        let quoted = part.drop { $0 == "(" }.dropFirst()
        return quoted.prefix { $0 != "\"" }.contains(" ")
    }

    /// The rows (page id, then the blob of `margin_phrase_hits`) best first, as FTS5 orders
    /// them by `rank` (ties by page id); nil when a blob isn't one (then the caller asks FTS5).
    static func order(_ rows: [Row]) -> [Int64]? {
        var entries = [(id: Int64, blob: Data)]()
        for row in rows {
            guard let blob = row[1] as Data? else { return nil }
            entries.append((row[0], blob))
        }
        return order(entries)
    }

    /// The page ids best first, from each page's blob of `margin_phrase_hits`; nil when a blob
    /// isn't one.
    static func order(_ rows: [(id: Int64, blob: Data)]) -> [Int64]? {
        var ids = [Int64]()
        var lengths = [Int32]()
        var hits = [[UInt32]]()
        var tableRows: Int64 = 0
        var tableTokens: Int64 = 0
        for (id, blob) in rows {
            guard blob.count >= 20, (blob.count - 20) % 4 == 0 else { return nil }
            let phrases = (blob.count - 20) / 4
            if let first = hits.first, first.count != phrases { return nil }
            blob.withUnsafeBytes { bytes in
                tableRows = bytes.loadUnaligned(fromByteOffset: 0, as: Int64.self)
                tableTokens = bytes.loadUnaligned(fromByteOffset: 8, as: Int64.self)
                lengths.append(bytes.loadUnaligned(fromByteOffset: 16, as: Int32.self))
                hits.append((0..<phrases).map { bytes.loadUnaligned(fromByteOffset: 20 + 4 * $0, as: UInt32.self) })
            }
            ids.append(id)
        }
        guard let phrases = hits.first?.count else { return [] }
        // fts5Bm25GetData: the average length, and each phrase's IDF from the pages holding it.
        let average = Double(tableTokens) / Double(tableRows)
        let idf = (0..<phrases).map { phrase in
            let holding = Int64(hits.count { $0[phrase] > 0 })
            let weight = log((Double(tableRows - holding) + 0.5) / (Double(holding) + 0.5))
            return weight <= 0.0 ? 1e-6 : weight
        }
        // fts5Bm25Function.
        let k1 = 1.2
        let b = 0.75
        let ranks = (0..<ids.count).map { row in
            let length = Double(lengths[row])
            var score = 0.0
            for phrase in 0..<phrases {
                let frequency = Double(hits[row][phrase])
                score += idf[phrase] * ((frequency * (k1 + 1.0)) / (frequency + k1 * (1 - b + b * length / average)))
            }
            return -1.0 * score
        }
        return (0..<ids.count).sorted { ranks[$0] < ranks[$1] || (ranks[$0] == ranks[$1] && ids[$0] < ids[$1]) }
            .map { ids[$0] }
    }
}
