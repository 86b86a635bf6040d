import Foundation
import Poppler

/// The text of every page of a PDF, extracted on all cores: each worker opens its own poppler
/// document (poppler objects are not thread-safe) and takes a contiguous run of pages.
struct ExtractedText: Sendable {
    /// Pages in order; `pages[0]` is page 1. `bookId` is 0 until the book is known.
    var pages: [PageText]
    /// Pages with no text at all (scans).
    var textless: Int {
        pages.filter { $0.text.allSatisfy(\.isWhitespace) }.count
    }
}

enum TextExtractor {
    static func extract(path: String, password: String?, pageCount: Int, workers: Int? = nil) throws -> ExtractedText {
        guard pageCount > 0 else { return ExtractedText(pages: []) }
        let count = max(1, min(workers ?? ProcessInfo.processInfo.activeProcessorCount, pageCount, 16))
        let chunk = (pageCount + count - 1) / count
        let results = WorkerResults(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { worker in
            let first = worker * chunk + 1
            let last = min(pageCount, first + chunk - 1)
            guard first <= last else { return results.set(worker, .success([])) }
            do {
                let document = try Document(path: path, password: password)
                var pages = [PageText]()
                pages.reserveCapacity(last - first + 1)
                for number in first...last {
                    let text = try document.page(number).text
                    pages.append(PageText(bookId: 0, number: number, text: text))
                }
                results.set(worker, .success(pages))
            } catch {
                results.set(worker, .failure(error))
            }
        }
        var pages = [PageText]()
        pages.reserveCapacity(pageCount)
        for result in results.all() {
            pages += try result.get()
        }
        return ExtractedText(pages: pages)
    }
}

private final class WorkerResults: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<[PageText], any Error>]

    init(count: Int) {
        results = Array(repeating: .success([]), count: count)
    }

    func set(_ index: Int, _ result: Result<[PageText], any Error>) {
        lock.lock()
        results[index] = result
        lock.unlock()
    }

    func all() -> [Result<[PageText], any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return results
    }
}
