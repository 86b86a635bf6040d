import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add PDFs by URL or path.",
            discussion: """
                Each input is downloaded (http, https) or copied (a path or file:// URL) into the \
                cache while its SHA-256 is computed, checked to be a PDF that poppler opens, and \
                saved as a book. Title and author come from the PDF unless given: its metadata \
                when usable, else the title and authors its first page shows (the largest type \
                near the top); the title falls back to the file name. The DOI, arXiv id and year \
                are read from the metadata, the first pages and the address (arxiv.org/abs/…, \
                doi.org/…). The same bytes from another URL are the same book: it is reported as \
                a duplicate and the URL is recorded as another source.

                --lookup asks Crossref (by DOI) or arXiv (by id) what the work is before saving \
                it; a lookup that fails adds nothing (one error line), a PDF with neither id is \
                added as it describes itself. MARGIN_CROSSREF_URL and MARGIN_ARXIV_URL point \
                elsewhere; MARGIN_CONTACT adds an e-mail address to the requests.

                Inputs are handled independently: one failure doesn't stop the others, and the \
                exit status is non-zero if any failed.

                Examples:
                  margin add https://arxiv.org/pdf/1706.03762 --folder papers/ml --tag attention
                  margin add ~/Downloads/*.pdf --jobs 8
                """
        )

        @Argument(help: ArgumentHelp("URLs (http, https, file) or paths of PDFs.", valueName: "URL|PATH"))
        var inputs: [String]

        @Option(help: "Title for the new book(s) instead of the PDF's own.")
        var title: String?

        @Option(help: "Author for the new book(s) instead of the PDF's own.")
        var author: String?

        @Option(help: ArgumentHelp("Put the book(s) in this folder (e.g. papers/ml).", valueName: "F"))
        var folder: String?

        @Option(
            name: .customLong("tag"), help: ArgumentHelp("Tag the book(s); repeat for several tags.", valueName: "T"))
        var tags: [String] = []

        @Option(help: ArgumentHelp("How many inputs to fetch at once.", valueName: "N"))
        var jobs = 4

        @Flag(help: "Look the work up online (Crossref by DOI, arXiv by id) before saving it.")
        var lookup = false
        @OptionGroup var secret: PasswordOptions

        @OptionGroup var limits: DownloadOptions

        @OptionGroup var ocr: OCROptions

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard !inputs.isEmpty else { throw ValidationError("give at least one URL or path to add") }
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        }

        func run() async throws {
            try ocr.apply()
            let library = try global.openLibrary(creating: true)
            var options = AddOptions(
                title: title, author: author, folder: folder, tags: tags, password: try secret.read(),
                maxSize: limits.maxSize.bytes, timeout: limits.timeout)
            options.lookup = lookup
            installInterruptHandler(global)
            let progress = TerminalProgress.make(global)
            let outcomes = await library.add(
                inputs, options: options, jobs: jobs, progress: progress, observer: progress
            ).map { outcome in
                // Each failure in the command line's words, with its hint.
                var outcome = outcome
                outcome.error = outcome.failure.map(userMessage) ?? outcome.error
                return outcome
            }
            try await global.show(outcomes) {
                for outcome in outcomes {
                    guard let info = outcome.book else { continue }
                    let verb = outcome.duplicate ? "already in the library as" : "added"
                    Console.out(
                        "\(verb) \(info.book.id ?? 0)  \(info.book.title) (\(pagesText(info.book.pages)), \(formatBytes(info.book.bytes)))"
                    )
                }
            }
            for outcome in outcomes where !outcome.duplicate {
                if let book = outcome.book?.book { try await noteIllegiblePages(book, library, global) }
            }
            for outcome in outcomes where outcome.book == nil {
                Console.error("error: \(outcome.error ?? "unknown error")")
            }
            let failed = outcomes.filter { !$0.ok }.count
            if failed > 0 {
                if outcomes.count > 1 { global.note("\(failed) of \(outcomes.count) inputs failed") }
                throw ExitCode(1)
            }
        }
    }
}

func pagesText(_ count: Int) -> String {
    MarginCore.count(count, "page")
}
