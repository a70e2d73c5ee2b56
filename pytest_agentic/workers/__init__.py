"""xdist workers: how a campaign's runs are dealt to them and moved between them.

``hooks`` is registered only when pytest-xdist is installed (and not disabled with ``-p
no:xdist``); ``stealing`` is the controller's scheduler, imported only when xdist asks for one.
"""
