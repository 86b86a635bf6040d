import Foundation
import MarginCore

/// The PDF engine's work on a file from outside runs in a child process with a time and a memory limit:
/// a small PDF can be built to make a reader work without end (form XObjects that fan out), and
/// it must cost the user an error, not a hung command or the machine's memory.
///
/// The child is this same executable, started with `helperCommand` as its first argument; the
/// CLI names itself in `Configuration.extractionHelper` (tests of the library alone extract in
/// process). A child serves one book after another (starting a process and loading poppler cost
/// more than reading a short PDF), until it has served `booksPerHelper`, failed, or run out of
/// time; then it is replaced.
public enum PopplerIsolation {
    public static let helperCommand = "__extract-text"
    /// Books a child reads before a fresh one takes over (whatever poppler keeps is let go).
    static let booksPerHelper = 64

    /// Runs in the child: reads requests on stdin until it ends, and answers each on stdout.
    ///
    /// A request: the page count, the path, the password (empty for none) and what to read from
    /// the pages' images (`OCRRequest`), each field a 4-byte little-endian length and its UTF-8
    /// bytes. An answer: a status byte, 0 for the text (then each page as a length and its bytes,
    /// and what else was read as JSON) or 1 for an error (then its message); before it, as pages
    /// are read from their image, any number of 2s, each followed by "read total".
    public static func runHelper(_ arguments: [String], configuration: Configuration) -> Int32 {
        becomeChild(configuration)
        guard arguments.isEmpty else {
            FileHandle.standardError.write(Data("usage: margin \(helperCommand) (requests on stdin)\n".utf8))
            return 2
        }
        let input = FrameReader(descriptor: 0)
        while let pagesField = input.field() {
            guard let pageCount = Int(String(decoding: pagesField, as: UTF8.self)),
                let pathField = input.field(), let passwordField = input.field()
            else { return 2 }
            let path = String(decoding: pathField, as: UTF8.self)
            let password = passwordField.isEmpty ? nil : String(decoding: passwordField, as: UTF8.self)
            guard let ocrField = input.field(), let ocr = OCRRequest.decode(String(decoding: ocrField, as: UTF8.self))
            else { return 2 }
            var answer = FrameWriter()
            let output = NSLock()
            do {
                let extracted = try TextExtractor.extractInProcess(
                    path: path, password: password, pageCount: pageCount, workers: configuration.extractWorkers,
                    ocr: ocr.settings, recognized: ocr.recognized, images: ocr.images
                ) { read, total in
                    var note = FrameWriter()
                    note.byte(2)
                    note.field("\(read) \(total)")
                    _ = output.withLock { note.flush(to: 1) }
                }
                answer.byte(0)
                for page in extracted.pages { answer.field(page.text) }
                let about = HelperAbout(guide: extracted.guide, found: extracted.found, ocr: extracted.ocr)
                answer.field(String(decoding: (try? JSONEncoder().encode(about)) ?? Data("{}".utf8), as: UTF8.self))
            } catch {
                answer = FrameWriter()
                answer.byte(1)
                answer.field(error.localizedDescription)
            }
            guard answer.flush(to: 1) else { return 1 }
        }
        return 0
    }

    /// What a poppler child does first: limit its address space, and end when its parent is gone
    /// (the work is for the parent alone: Ctrl-C, a kill).
    static func becomeChild(_ configuration: Configuration) {
        let memoryLimit = configuration.popplerMemoryLimit
        var limit = rlimit(rlim_cur: rlim_t(memoryLimit), rlim_max: rlim_t(memoryLimit))
        setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
        let parent = getppid()
        Thread.detachNewThread {
            while getppid() == parent { usleep(200_000) }
            _exit(3)
        }
    }

    /// Has a child read the text of `path`, and reads the pages back.
    static func extract(
        helper: String, path: String, password: String?, pageCount: Int, configuration: Configuration,
        recognized: Set<Int>, images: Set<String>, pagesRead: TextExtractor.PagesRead?
    ) throws -> ExtractedText {
        let memoryLimit = configuration.popplerMemoryLimit
        var request = FrameWriter()
        request.field(String(pageCount))
        request.field(path)
        request.field(password ?? "")
        request.field(OCRRequest(settings: configuration.ocr, recognized: recognized, images: images).encoded)
        // A waiting child that has gone meanwhile takes no request: a fresh one does.
        var child = try HelperPool.shared.take(helper)
        if !request.flush(to: child.input) {
            _ = child.end()
            child = try HelperPool.shared.take(helper, fresh: true)
            guard request.flush(to: child.input) else {
                let status = child.end()
                throw MarginError.popplerLimit(
                    "the text extractor did not start (\(status.exited ? "exit \(status.code)" : "signal \(status.code)"))"
                )
            }
        }
        let limit = configuration.popplerTimeLimit(pages: pageCount)
        let timedOut = WriteFlag()
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + limit)
        let pid = child.pid
        timer.setEventHandler {
            timedOut.set()
            kill(pid, SIGKILL)
        }
        timer.resume()
        let answer = child.output.answer(pageCount: pageCount, pagesRead: pagesRead)
        timer.cancel()
        guard let answer, !timedOut.isSet else {
            let status = child.end()
            if timedOut.isSet {
                throw MarginError.popplerLimit(
                    "poppler took longer than \(Int(limit)) s to read its text (a PDF built to exhaust readers?)")
            }
            throw MarginError.popplerLimit(
                "poppler stopped while reading its text (\(status.exited ? "exit \(status.code)" : "signal \(status.code)"); "
                    + "memory limit \(memoryLimit >> 20) MB)")
        }
        HelperPool.shared.give(child)
        switch answer {
        case .failure(let message): throw MarginError.io(message)
        case .success(let texts, let aboutJSON):
            guard texts.count == pageCount else {
                throw MarginError.popplerLimit("the text extractor returned \(texts.count) of \(pageCount) pages")
            }
            let about = try? JSONDecoder().decode(HelperAbout.self, from: Data(aboutJSON.utf8))
            return ExtractedText(
                pages: texts.enumerated().map { PageText(bookId: 0, number: $0.offset + 1, text: $0.element) },
                guide: about?.guide, found: about?.found, ocr: about?.ocr ?? [])
        }
    }
}

/// What a child says of a book besides its pages' text.
private struct HelperAbout: Codable {
    var guide: BookGuide?
    var found: FoundMetadata?
    var ocr: [OCRPage]?
}

/// What a child is told of recognition: mode, languages, force, the pages to read ("-" for all,
/// "none" for none), those read before, and the images read in other files, as one line
/// ("auto eng 0 - 3,4 -").
struct OCRRequest {
    var settings: OCRSettings
    var recognized: Set<Int>
    var images: Set<String> = []

    var encoded: String {
        func list(_ pages: Set<Int>?) -> String {
            guard let pages else { return "-" }
            return pages.isEmpty ? "none" : pages.sorted().map(String.init).joined(separator: ",")
        }
        return [
            settings.mode.rawValue, settings.languages, settings.force ? "1" : "0", list(settings.pages),
            list(recognized), images.isEmpty ? "-" : images.sorted().joined(separator: ","),
        ]
        .map { $0.isEmpty ? "-" : $0 }.joined(separator: " ")
    }

    static func decode(_ line: String) -> OCRRequest? {
        let parts = line.split(separator: " ").map(String.init)
        guard parts.count == 6, let mode = OCRSettings.Mode(rawValue: parts[0]) else { return nil }
        func list(_ text: String) -> Set<Int>? {
            text == "-" ? nil : text == "none" ? [] : Set(text.split(separator: ",").compactMap { Int($0) })
        }
        var settings = OCRSettings()
        settings.mode = mode
        settings.languages = parts[1]
        settings.force = parts[2] == "1"
        settings.pages = list(parts[3])
        let images = parts[5] == "-" ? [] : Set(parts[5].split(separator: ",").map(String.init))
        return OCRRequest(settings: settings, recognized: list(parts[4]) ?? [], images: images)
    }
}

/// Children waiting for their next book.
private final class HelperPool: @unchecked Sendable {
    static let shared = HelperPool()
    private let lock = NSLock()
    private var idle = [Child]()

    func take(_ executable: String, fresh: Bool = false) throws -> Child {
        lock.lock()
        let waiting = fresh ? nil : idle.popLast()
        lock.unlock()
        return try waiting ?? Child(executable, [PopplerIsolation.helperCommand])
    }

    func give(_ child: Child) {
        child.served += 1
        guard child.served < PopplerIsolation.booksPerHelper else {
            // Its input closed, it ends; reaped off this thread.
            DispatchQueue.global().async { _ = child.end() }
            return
        }
        lock.lock()
        idle.append(child)
        lock.unlock()
    }
}

/// The answer to one request, or nil when the child's output ended or made no sense.
enum Answer {
    /// The pages' text, and the guide and metadata as JSON.
    case success([String], String)
    case failure(String)
}

/// A child process started with `posix_spawn`, its stdin and stdout on pipes and its stderr
/// (poppler's warnings) on /dev/null, reaped with `waitpid`.
final class Child: @unchecked Sendable {
    static let spawning = NSLock()
    let pid: pid_t
    let input: Int32
    let output: FrameReader
    var served = 0

    init(_ executable: String, _ arguments: [String]) throws {
        var inPipe: [Int32] = [0, 0]
        var outPipe: [Int32] = [0, 0]
        // A child spawned meanwhile for another book must not hold these pipes open: spawns take
        // turns, and the pipes are close-on-exec (the copies made for the child are not).
        Child.spawning.lock()
        defer { Child.spawning.unlock() }
        guard pipe(&inPipe) == 0, pipe(&outPipe) == 0 else {
            throw MarginError.io("cannot start the text extractor: \(String(cString: strerror(errno)))")
        }
        for descriptor in inPipe + outPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        for descriptor in inPipe + outPipe { posix_spawn_file_actions_addclose(&actions, descriptor) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, environ)
        close(inPipe[0])
        close(outPipe[1])
        guard result == 0 else {
            close(inPipe[1])
            close(outPipe[0])
            throw MarginError.io("cannot start the text extractor \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        input = inPipe[1]
        output = FrameReader(descriptor: outPipe[0])
    }

    /// Closes the pipes and reaps the child: how it ended.
    func end() -> (exited: Bool, code: Int32) {
        close(input)
        close(output.descriptor)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (true, (status >> 8) & 0xff) : (false, signal)
    }
}

/// Length-prefixed fields read from a descriptor, buffered.
final class FrameReader: @unchecked Sendable {
    let descriptor: Int32
    private var buffer = [UInt8]()
    private var start = 0

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// Makes `count` bytes available from `start`; false at the end of the input.
    private func fill(_ count: Int) -> Bool {
        if buffer.count - start >= count { return true }
        buffer.removeFirst(start)
        start = 0
        var chunk = [UInt8](repeating: 0, count: max(1 << 16, count - buffer.count))
        while buffer.count < count {
            let read = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if read < 0 && errno == EINTR { continue }
            if read <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<read])
        }
        return true
    }

    func byte() -> UInt8? {
        guard fill(1) else { return nil }
        start += 1
        return buffer[start - 1]
    }

    func field() -> [UInt8]? {
        guard fill(4) else { return nil }
        let length = (0..<4).reduce(0) { $0 | Int(buffer[start + $1]) << (8 * $1) }
        guard length <= 1 << 30, fill(4 + length) else { return nil }
        defer { start += 4 + length }
        return Array(buffer[start + 4..<start + 4 + length])
    }

    func answer(pageCount: Int, pagesRead: TextExtractor.PagesRead? = nil) -> Answer? {
        var status = byte()
        while status == 2 {
            guard let note = field() else { return nil }
            let counts = String(decoding: note, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
            if counts.count == 2 { pagesRead?(counts[0], counts[1]) }
            status = byte()
        }
        switch status {
        case 0:
            var texts = [String]()
            texts.reserveCapacity(pageCount)
            for _ in 0..<pageCount {
                guard let field = field() else { return nil }
                texts.append(String(decoding: field, as: UTF8.self))
            }
            guard let about = field() else { return nil }
            return .success(texts, String(decoding: about, as: UTF8.self))
        case 1: return field().map { .failure(String(decoding: $0, as: UTF8.self)) }
        default: return nil
        }
    }
}

/// Length-prefixed fields gathered, then written to a descriptor at once.
struct FrameWriter {
    private var bytes = [UInt8]()

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func field(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            let count = UInt32(utf8.count)
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: count >> shift)) }
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func field(bytes data: Data) {
        let count = UInt32(data.count)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: count >> shift)) }
        bytes.append(contentsOf: data)
    }

    /// Writes everything gathered; false when the other end is gone (without the SIGPIPE that
    /// would end this process: it is blocked on this thread and taken back if raised).
    func flush(to descriptor: Int32) -> Bool {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer {
            var pending = sigset_t()
            if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 {
                var none = timespec()
                _ = sigtimedwait(&pipeSignal, nil, &none)
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        return bytes.withUnsafeBytes { writeAll($0, to: descriptor) == nil }
    }
}

/// A time limit on poppler work done in this process (rendering a page, placing highlights,
/// writing an annotated PDF): past it, the command ends with one error line instead of running
/// for ever. Files being written are temporaries, removed by the next run.
enum PopplerWatchdog {
    static func limit(_ what: String, pages: Int = 1, configuration: Configuration, _ work: () throws -> Void) rethrows
    {
        let seconds = configuration.popplerTimeLimit(pages: pages)
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + seconds)
        timer.setEventHandler {
            FileHandle.standardError.write(
                Data(
                    "error: poppler took longer than \(Int(seconds)) s to \(what) (a PDF built to exhaust readers?); nothing was changed\n"
                        .utf8))
            Interruption.exit(1)
        }
        timer.resume()
        defer { timer.cancel() }
        try work()
    }
}
