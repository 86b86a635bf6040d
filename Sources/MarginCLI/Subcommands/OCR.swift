import ArgumentParser
import Foundation
import MarginCore
import MarginKit

/// `--ocr` and `--ocr-lang`, for the commands that read a book's text (add, reindex, refresh).
struct OCROptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Read pages from their image: auto (pages without usable text, when Tesseract and the language data are installed), always (every page), never.",
            valueName: "auto|always|never"))
    var ocr: OCRSettings.Mode?

    @Option(
        name: .customLong("ocr-lang"),
        help: ArgumentHelp(
            "Tesseract's languages, + between them (default: $MARGIN_OCR_LANG, else eng).", valueName: "L"))
    var languages: String?

    /// Makes these the command's settings; what the user asked for by name (`always`, a
    /// language) must be installed, else the command ends before it reads anything.
    func apply() throws {
        if let ocr { Settings.configuration.ocr.mode = ocr }
        if let languages { Settings.configuration.ocr.languages = languages }
        if ocr == .always || (languages != nil && ocr != .never) { try requireRecognizer() }
    }
}

extension OCRSettings.Mode: ExpressibleByArgument {}

/// Tesseract and the data of the configured languages are installed, or an error says what to install.
func requireRecognizer() throws {
    guard let recognizer = TextRecognizers.current else {
        throw MarginError.invalidArgument("this margin reads no scanned pages (it was built without Tesseract)")
    }
    do {
        try recognizer.check(languages: Settings.configuration.ocr.languages)
    } catch let error as OCRError {
        throw MarginError.invalidArgument(error.localizedDescription)
    }
}

extension Margin {
    struct OCR: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ocr",
            abstract: "Read the scanned pages of books already in the library (OCR), so that search finds them.",
            discussion: """
                Pages without a usable text layer are drawn at 300 dpi and read by Tesseract 5; their words \
                and boxes are kept by the PDF's SHA-256 and page, so that no page is read twice. The PDF \
                itself is never changed. Examples:
                  margin ocr 12
                  margin ocr --all --lang eng+deu
                  margin ocr 12 --pages 3-9 --force
                """
        )

        @Argument(help: "The books (all with --all).")
        var books: [String] = []

        @Flag(help: "Every book of the library.")
        var all = false

        @Option(help: ArgumentHelp("Only these pages (e.g. 3-9,12).", valueName: "P"))
        var pages: String?

        @Option(
            help: ArgumentHelp(
                "Tesseract's languages, + between them (default: $MARGIN_OCR_LANG, else eng).", valueName: "L"))
        var lang: String?

        @Flag(help: "Read the pages again, those already read and those with a text layer too.")
        var force = false

        @Option(help: ArgumentHelp("Pages read at once (default: one a core).", valueName: "N"))
        var jobs: Int?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard all != !books.isEmpty else { throw ValidationError("give the books to read, or --all") }
            if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        }

        func run() async throws {
            var settings = Settings.configuration.ocr
            settings.mode = force ? .always : .auto
            settings.force = force
            if let lang { settings.languages = lang }
            let list = try pages.map(PageList.init(parsing:))
            // Past the longest book nothing is asked; each book's pages are checked once it is known.
            if let list {
                do {
                    settings.pages = Set(try list.pages(count: 100_000))
                } catch MarginError.pageOutOfRange(let page, _) {
                    throw MarginError.invalidArgument("pages count from 1: \(page) is not a page of any book")
                }
            }
            Settings.configuration.ocr = settings
            if let jobs { Settings.configuration.extractWorkers = jobs }
            try requireRecognizer()
            let library = try global.openLibrary()
            let selected = try await all ? library.allBooks() : library.resolveAll(books)
            if let list { for book in selected { _ = try list.pages(count: book.pages) } }
            installInterruptHandler(
                global, saying: "the pages read so far are kept: run the same command again to go on")
            var done = [Book]()
            let progress = TerminalProgress.make(global)
            for book in selected {
                done.append(try await library.recognize(book, observer: progress))
            }
            func views() async throws -> [BookInfo] {
                var views = [BookInfo]()
                for book in done { views.append(try await library.info(book)) }
                return views
            }
            for book in done { try await noteIllegiblePages(book, library, global) }
            try await global.show(try await views()) {
                for book in done {
                    let nothing = book.textlessPages > 0 ? ", \(book.textlessPages) with nothing legible" : ""
                    let confidence = book.ocrConfidence.map { String(format: ", confidence %.0f", $0) } ?? ""
                    Console.out(
                        "\(book.id ?? 0)  \(book.title): \(pagesText(book.ocrPages)) read from their image\(confidence)\(nothing)"
                    )
                }
            }
        }
    }
}

/// Says which pages of `book` hold nothing legible, as ranges ("pages 3, 7-9"), and what reads
/// them when OCR didn't run.
func noteIllegiblePages(_ book: Book, _ library: Library, _ global: GlobalOptions) async throws {
    let pages = try await library.illegiblePages(of: book)
    guard !pages.isEmpty else { return }
    var spans = [String]()
    var start = pages[0]
    var last = pages[0]
    for page in pages.dropFirst() + [Int.max] {
        if page == last + 1 {
            last = page
            continue
        }
        spans.append(start == last ? String(start) : "\(start)-\(last)")
        start = page
        last = page
    }
    let which = (pages.count == 1 ? "page " : "pages ") + spans.joined(separator: ", ")
    let remedy =
        Settings.configuration.ocr.mode == .never || TextRecognizers.current == nil
        ? "; 'margin ocr \(book.id ?? 0)' reads scanned pages" : " (blank, or nothing OCR could read)"
    global.note("note: nothing legible on \(which) of '\(terminalSafe(book.title))'\(remedy)")
}
