package entity

// The words that ProperNouns reads names by, in lower case.
var (
	// never are words that are capitalised but name nothing a user
	// keeps: pronouns, weekdays, months, greetings and interjections,
	// the times of a day, parents called by their role, and common
	// abbreviations. They break a run of capitalised words ("Thanks
	// Priya" is Priya).
	never = wordSet(`i i'm i've i'll i'd i’m i’ve i’ll i’d
		monday tuesday wednesday thursday friday saturday sunday
		january february march april may june july august september sept october november december
		hi hey hello hiya howdy yo thanks thank thx ty cheers congrats congratulations welcome dear bye goodbye sorry please
		ok okay yeah yep yup nope nah yes no sure wow whoa woah oh ah aw aww ooh oops haha hahaha hehe lol omg btw ttyl fyi
		imo imho tbh idk irl brb np pls yay woo woohoo hooray hmm um uh happy merry
		today tonight tomorrow yesterday morning afternoon evening night
		mom mum dad mother father mama papa grandma grandpa granny nana sis bro
		tv diy asap am pm ceo cto api json html css url pdf gps usb id ps rsvp eta faq etc aka tbd ai
		cli gui ui ux os pc cpu gpu ram ssd vpn wifi sms`)

	// greetings before a name make it a person's: "Thanks Priya",
	// "Hey Jon", "Thanks, Gina".
	greetings = wordSet(`hi hey hello hiya howdy yo thanks thank thx ty cheers congrats congratulations welcome dear bye goodbye
		sorry morning evening night`)

	// interjections before a name said to someone make it a person's:
	// "Wow, John, that's great", "Yeah John."
	interjections = wordSet(`wow whoa woah oh ah aw aww ooh yeah yes yep yup ok okay sure no nope nah well hmm haha lol omg yay woo
		woohoo hooray`)

	// openers are the ordinary words that a sentence, a list item or a
	// title opens with, capitalised as every first word is: function
	// words, adverbs, interjections, the imperatives of instructions and
	// the words of headings. A sentence's first words among them are not
	// part of a name ("Visit Sintra" is at most Sintra), and a name of
	// openers only is none ("Good Luck", "Next Steps").
	openers = wordSet(`a an the this that these those my your his her its our their me you he she it we they him them us
		you're you've you'll you'd he's she's it's we're we've we'll they're they've there there's here here's
		what what's who who's whom whose which when where why how whatever whoever whenever wherever however
		and but or nor so yet for if then than because since though although while whereas unless until till after before once as
		at by from in into on onto of off out over under up down with without within about above below across along among around
		behind beside between beyond during except inside near outside past through throughout to toward towards upon via per
		is are was were be been being am do does did done doing have has had having will would shall should can could may might must
		not all any both each either every few many more most much neither none other others some such same own only just also too
		very really quite rather even still already again ever never always often sometimes usually maybe perhaps probably actually
		basically honestly seriously literally anyway anyways besides otherwise instead meanwhile finally luckily unfortunately
		fortunately hopefully sadly thankfully obviously clearly certainly definitely absolutely totally personally generally overall
		first second third last next now soon later earlier recently currently lately let let's
		good great nice cool awesome amazing fantastic wonderful lovely sweet perfect alright right well agreed indeed exactly true
		gotcha noted fine glad long anytime
		add ask avoid bring book buy call carry change check choose click close come compare consider contact continue copy create
		cut download drink eat enable enjoy ensure explore fill find fix follow get give go grab head hold imagine include install
		join keep know learn leave limit list look make mark note open order pack pay pick place plan play prepare press print put
		read remember remove replace reserve rest run save say schedule see select send set share show sign sit skip sleep start
		stay step stop store swap take talk tell think try turn update upload use visit wait walk watch wear write
		new old big small short best better worst top key important main quick easy simple total whole full free extra different
		special local general final basic optional tip tips warning example examples steps summary option options pros cons bonus
		day days week weeks month months year years time times life work home family kids friends people everything everyone
		everybody something someone somebody anything anyone nothing nobody lots plenty sounds looks seems feels`)

	// connectors are the lower-case words inside a name: "Bank of
	// America", "The Lord of the Rings".
	connectors = wordSet(`of the de da del della van von der den du la le di y &`)

	// titleWords are the function words that only Title Case
	// capitalises: a run holding one after its first word is a title
	// ("Reserve A Table For Dinner"), not a name.
	titleWords = wordSet(`a an the and or of for to in on at with by from your my our is are out up into as`)

	// honorifics open a person's name: "Dr. Okafor", "Aunt May".
	honorifics = wordSet(`dr dr. mr mr. mrs mrs. ms ms. mx mx. prof prof. sir dame aunt auntie uncle grandma grandpa`)

	// people are the nouns of a person that a name follows ("my
	// sister Priya", "my doctor Dr. Okafor"); pets those of an animal
	// ("our dog Bruno").
	people = wordSet(`sister brother son daughter wife husband partner boyfriend girlfriend fiance fiancé fiancee fiancée friend
		boss colleague coworker co-worker manager doctor dentist therapist gp nurse teacher coach tutor mentor neighbour neighbor
		mum mom dad mother father aunt uncle cousin niece nephew grandson granddaughter grandma grandpa grandmother grandfather
		baby kid child roommate flatmate buddy mate landlord stepson stepdaughter stepmother stepfather sibling twin
		he she he's she's his her him`)
	pets = wordSet(`dog cat puppy pup kitten pet horse pony rabbit bunny hamster parrot budgie bird fish turtle tortoise lizard snake ferret`)

	// thingKinds name what "an app called X" is.
	thingKinds = map[string]string{"app": "product", "game": "product", "tool": "product", "software": "product",
		"company": "organization", "startup": "organization", "brand": "organization", "band": "organization", "charity": "organization",
		"restaurant": "place", "cafe": "place", "café": "place", "bar": "place", "pub": "place", "shop": "place", "store": "place",
		"town": "place", "village": "place", "city": "place", "hotel": "place"}

	// After a person's name: "Tom and I", "Tom said".
	personAfter = wordSet(`said says told asked texted called messaged replied suggested thinks wants loves likes`)
	// Before a place's name ("in Leeds", "near Whitby"), and before the
	// "to" or "from" of one ("drove to Whitby", "I'm from Leeds").
	placeBefore = wordSet(`in near around across outside visiting visit visited toward towards`)
	// What is written in a language, not in a place: "written in Rust".
	written = wordSet(`written write writing wrote built build building coded code coding implemented programmed developed
		scripted`)
	motion = wordSet(`go goes going gone went drive drives driving drove fly flies flying flew travel travels travelling traveling
		travelled traveled move moves moving moved trip journey flight flights head heading headed back return returning returned
		walk walked ride rode commute commuted road vacation holiday holidays relocate relocated relocating emigrate emigrated
		come comes coming came 'm i'm i’m am is are was were originally`)
	// Work before the "at" of an organisation: "I work at Acme".
	work = wordSet(`work works working worked job jobs intern interning internship employed hired started start starts starting joined
		join shift shifts position role volunteer volunteering volunteered`)
	// Using a product: "playing Valorant", "installed Notion".
	using = wordSet(`play plays playing played using use uses used installed install downloaded download`)

	// The last word of a name tells its type: "Acme Corp",
	// "Whitby Abbey".
	orgSuffixes = wordSet(`inc inc. corp corp. ltd ltd. llc co co. company bank university college school academy hospital clinic
		institute foundation group airlines airways club society association council agency studio studios labs`)
	placeSuffixes = wordSet(`street st st. road rd rd. avenue ave ave. lane park lake river mountain mountains mount mt beach bay island
		islands city county valley hill hills airport station square bridge tower castle abbey cathedral church museum gallery
		market falls canyon forest coast harbour harbor heights village modern`)
)
