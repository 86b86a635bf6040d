import Foundation

/// Poppler's work on a PDF from outside runs in a child process with a time and a memory limit:
/// a small PDF can be built to make a reader work without end (form XObjects that fan out), and
/// it must cost the user an error, not a hung command or the machine's memory.
///
/// The child is this same executable, started with `helperCommand` as its first argument; the
/// CLI sets `helper` at start-up (tests of the library alone extract in process).
public enum PopplerIsolation {
    /// The executable that answers `helperCommand`; nil to work in process.
    nonisolated(unsafe) public static var helper: String?
    public static let helperCommand = "__extract-text"

    /// Seconds the child may take: a base plus a little per page (MARGIN_POPPLER_TIMEOUT sets it).
    static func timeLimit(pages: Int) -> Double {
        if let fixed = ProcessInfo.processInfo.environment["MARGIN_POPPLER_TIMEOUT"].flatMap(Double.init) { return max(0.1, fixed) }
        return 20 + Double(pages) / 2
    }

    /// Bytes of address space the child may use (MARGIN_POPPLER_MEMORY_MB sets it).
    static var memoryLimit: UInt64 {
        let megabytes = ProcessInfo.processInfo.environment["MARGIN_POPPLER_MEMORY_MB"].flatMap(UInt64.init) ?? 4096
        return max(256, megabytes) << 20
    }

    /// Runs in the child: extracts the text and writes each page as a 4-byte length and its
    /// UTF-8 bytes on stdout. The password, if any, is the first line of stdin.
    public static func runHelper(_ arguments: [String]) -> Int32 {
        var limit = rlimit(rlim_cur: rlim_t(memoryLimit), rlim_max: rlim_t(memoryLimit))
        setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
        // The work is for the parent alone: when it is gone (Ctrl-C, a kill), stop.
        let parent = getppid()
        Thread.detachNewThread {
            while getppid() == parent { usleep(200_000) }
            _exit(3)
        }
        guard arguments.count == 2, let pages = Int(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: margin \(helperCommand) PATH PAGES\n".utf8))
            return 2
        }
        let input = FileHandle.standardInput.readDataToEndOfFile()
        let line = String(decoding: input, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
        let password = line.flatMap { $0.isEmpty ? nil : $0 }
        do {
            let extracted = try TextExtractor.extractInProcess(path: arguments[0], password: password, pageCount: pages)
            var output = Data()
            for page in extracted.pages {
                let bytes = Data(page.text.utf8)
                var length = UInt32(bytes.count).littleEndian
                output.append(Data(bytes: &length, count: 4))
                output.append(bytes)
                if output.count > 1 << 20 {
                    FileHandle.standardOutput.write(output)
                    output.removeAll(keepingCapacity: true)
                }
            }
            FileHandle.standardOutput.write(output)
            return 0
        } catch {
            FileHandle.standardError.write(Data(error.localizedDescription.utf8))
            return 1
        }
    }

    /// Runs the helper on `path` and reads the pages back.
    static func extract(helper: String, path: String, password: String?, pageCount: Int) throws -> ExtractedText {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = [helperCommand, path, String(pageCount)]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw MarginError.io("cannot start the text extractor \(helper): \(error.localizedDescription)")
        }
        input.fileHandleForWriting.write(Data(((password ?? "") + "\n").utf8))
        try? input.fileHandleForWriting.close()
        let limit = timeLimit(pages: pageCount)
        let timedOut = WriteFlag()
        let pid = process.processIdentifier
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + limit)
        timer.setEventHandler {
            timedOut.set()
            kill(pid, SIGKILL)
        }
        timer.resume()
        let errorText = ErrorText()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errorText.set(errors.fileHandleForReading.readDataToEndOfFile())
            group.leave()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        timer.cancel()
        if timedOut.isSet {
            throw MarginError.popplerLimit(
                "poppler took longer than \(Int(limit)) s to read its text (a PDF built to exhaust readers?)")
        }
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let message = String(decoding: errorText.get(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if process.terminationReason == .uncaughtSignal || message.isEmpty {
                throw MarginError.popplerLimit(
                    "poppler stopped while reading its text (signal \(process.terminationStatus); memory limit \(memoryLimit >> 20) MB)")
            }
            throw MarginError.io(message)
        }
        var pages = [PageText]()
        pages.reserveCapacity(pageCount)
        var offset = 0
        while offset + 4 <= data.count, pages.count < pageCount {
            let length = data[offset..<offset + 4].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            offset += 4
            guard offset + length <= data.count else { break }
            pages.append(PageText(bookId: 0, number: pages.count + 1, text: String(decoding: data[offset..<offset + length], as: UTF8.self)))
            offset += length
        }
        guard pages.count == pageCount else {
            throw MarginError.popplerLimit("the text extractor returned \(pages.count) of \(pageCount) pages")
        }
        return ExtractedText(pages: pages)
    }
}

private final class ErrorText: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}
