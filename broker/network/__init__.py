"""Network: journals, rules, auth answers, cookies, console and page errors."""
