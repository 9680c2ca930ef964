"""Operations of the API (errors, logs, health): request ids and JSON access logs,
body and rate limits, Chinese/English problems, health probes, ``make serve``.

Most tests run a small Litestar app built with the real pieces
(:mod:`tests.api.ops.small_app`); ``test_real_app`` checks that ``api.app.create_app``
registers them.
"""
