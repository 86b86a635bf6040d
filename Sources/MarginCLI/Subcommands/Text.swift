import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Text: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "text",
            abstract: "Print the text of a book's pages.",
            discussion: """
                The text poppler extracts, as pdftotext does, with a form feed between pages. \
                --json gives [{"page": N, "text": "..."}].

                Examples:
                  margin text 3 --pages 1-2,5
                  margin text "deep learning" | less
                """
        )

        @Argument(help: "The book.")
        var book: String

        @Option(
            help: ArgumentHelp("Pages: N, A-B, or a comma list (1-based).", valueName: "P"), transform: pageListArgument
        )
        var pages: PageList?

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try await library.resolve(book)
            let numbers = try pages?.pages(count: selected.pages)
            let output = try await library.text(of: selected, pages: numbers)
            try await library.touch(selected)
            try await global.show(output) {
                var text = output.map(\.text).joined(separator: "\u{0C}")
                if !text.hasSuffix("\n") { text += "\n" }
                // Page breaks stay form feeds, as in pdftotext; other control characters go.
                Console.write(terminalSafe(text, keep: ["\u{0C}"]), to: STDOUT_FILENO)
            }
        }
    }

    struct Reindex: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reindex",
            abstract: "Extract and index the text of books again (all books when none is given)."
        )

        @Argument(help: "The books.")
        var books: [String] = []

        @OptionGroup var ocr: OCROptions

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try ocr.apply()
            let library = try global.openLibrary()
            let selected = try await library.resolveAll(books)
            let progress = TerminalProgress.make(global)
            let done = try await library.reindex(
                selected, progress: progress?.counter("indexing"), observer: progress)
            for book in done { try await noteIllegiblePages(book, library, global) }
            try await global.show(
                done.map {
                    [
                        "id": Int($0.id ?? 0), "pages": $0.pages, "textlessPages": $0.textlessPages,
                        "ocrPages": $0.ocrPages,
                    ]
                }
            ) {
                for book in done {
                    let scans =
                        (book.ocrPages > 0 ? ", \(book.ocrPages) read from their image" : "")
                        + (book.textlessPages > 0 ? ", \(book.textlessPages) without text" : "")
                    Console.out("indexed \(book.id ?? 0)  \(book.title) (\(pagesText(book.pages))\(scans))")
                }
            }
        }
    }
}
