"""The two real browsers the reader's tests drive: Debian's chromium through chromium-driver
with Selenium, and Debian's firefox-esr through its own Marionette protocol (marionette-driver;
no geckodriver). Driver paths are given, so nothing is downloaded."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


class Chromium:
    def __init__(self, width=1200, height=1400):
        os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not fetch a driver
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        self.by = By.CSS_SELECTOR
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--no-first-run", "--disable-extensions"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(
            service=Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")),
            options=options)

    def viewport(self, width, height):
        """The page laid out as on a phone of that size (a window can't be narrower than 500 px)."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})

    def get(self, address): self.driver.get(address)
    def url(self): return self.driver.current_url
    def finds(self, css): return self.driver.find_elements(self.by, css)
    def script(self, code, *args): return self.driver.execute_script(code, *args)
    def press(self, key): self.driver.find_element(self.by, "body").send_keys(key)

    def answer_prompt(self, text):
        alert = self.driver.switch_to.alert
        alert.send_keys(text)
        alert.accept()

    def screenshot(self, path): self.driver.save_screenshot(path)

    def console_errors(self):
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]

    def quit(self): self.driver.quit()


class Firefox:
    def __init__(self, width=1200, height=1400):
        from marionette_driver.by import By
        from marionette_driver.marionette import Marionette
        self.by = By.CSS_SELECTOR
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.profile = tempfile.mkdtemp(prefix="margin-firefox-")
        with open(os.path.join(self.profile, "user.js"), "w") as prefs:
            prefs.write(f'user_pref("marionette.port", {port});\n')
            prefs.write('user_pref("browser.shell.checkDefaultBrowser", false);\n')
            prefs.write('user_pref("datareporting.policy.dataSubmissionEnabled", false);\n')
        self.process = subprocess.Popen(
            [os.environ.get("FIREFOX", "/usr/bin/firefox-esr"), "--headless", "--marionette", "--no-remote",
             "--profile", self.profile, "-width", str(width), "-height", str(height)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.client = Marionette(host="127.0.0.1", port=port)
        self.client.raise_for_port(timeout=60)
        self.client.start_session()

    def get(self, address): self.client.navigate(address)
    def url(self): return self.client.get_url()
    def finds(self, css): return self.client.find_elements(self.by, css)
    def script(self, code, *args): return self.client.execute_script(code, script_args=list(args))

    def press(self, key):
        keys = self.client.actions.sequence("key", "keyboard")
        keys.key_down(key).key_up(key).perform()

    def answer_prompt(self, text):
        from marionette_driver.marionette import Alert
        alert = Alert(self.client)
        alert.send_keys(text)
        alert.accept()

    def screenshot(self, path):
        with open(path, "wb") as out:
            out.write(self.client.screenshot(format="binary"))

    def console_errors(self): return None  # Marionette does not hand over the console

    def quit(self):
        try:
            self.client.delete_session()
        finally:
            # Firefox and its content processes, all of them (they share the session started).
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
            shutil.rmtree(self.profile, ignore_errors=True)


def start(browser, width=1200, height=1400):
    return Chromium(width, height) if browser == "chromium" else Firefox(width, height)


def waiter(browser):
    """wait(condition, what): the condition's value once truthy; exits saying what it waited for."""
    def wait(condition, what, seconds=float(os.environ.get("READER_E2E_WAIT", "60"))):
        end = time.monotonic() + seconds
        problem = None
        while time.monotonic() < end:
            try:
                value = condition()
                if value:
                    return value
            except Exception as error:  # an alert not there yet, a page still loading
                problem = error
            time.sleep(0.05)
        raise SystemExit(f"{browser}: timed out waiting for {what} (last: {problem})")
    return wait
