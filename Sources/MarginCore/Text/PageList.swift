import Foundation

/// 1-based pages as a user writes them: `N`, `A-B`, or a comma list of those (`1,3-5`).
/// The syntax is checked once, when parsed; the pages against a book's page count by
/// `pages(count:)`, since the count is known only once the book is.
public struct PageList: Sendable, Equatable {
    struct Span: Sendable, Equatable {
        var first: Int
        var last: Int
        var isRange: Bool
    }

    /// As written.
    public let text: String
    let spans: [Span]

    public init(parsing text: String) throws {
        var spans = [Span]()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let piece = part.trimmingCharacters(in: .whitespaces)
            let bounds = piece.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
                Int($0.trimmingCharacters(in: .whitespaces))
            }
            guard !piece.isEmpty, bounds.allSatisfy({ $0 != nil }), let first = bounds.first ?? nil else {
                throw MarginError.invalidArgument(
                    "'\(text)' is not a page list: write N, A-B or a comma list such as 1,3-5")
            }
            let last = bounds.count == 2 ? (bounds[1] ?? first) : first
            guard first <= last else {
                throw MarginError.invalidArgument(
                    "the page range \(first)-\(last) goes backwards; write \(last)-\(first)")
            }
            spans.append(Span(first: first, last: last, isRange: bounds.count == 2))
        }
        self.text = text
        self.spans = spans
    }

    /// The pages of a book of `count` pages, each once, in the order first asked for. A range
    /// starting within the book and running past its end stops at the last page (as pdftotext
    /// does); any other page outside `1...count` is an error.
    public func pages(count: Int) throws -> [Int] {
        var pages = [Int]()
        for span in spans {
            var last = span.last
            if span.isRange, span.first >= 1, span.first <= count { last = min(last, count) }
            for page in [span.first, last] where page < 1 || page > count {
                throw MarginError.pageOutOfRange(page: page, count: count)
            }
            pages += Array(span.first...last)
        }
        var seen = Set<Int>()
        return pages.filter { seen.insert($0).inserted }
    }
}
